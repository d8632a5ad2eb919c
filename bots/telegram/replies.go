package telegram

import (
	"context"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/gate"
)

// Replies to chat messages (command answers, help lines) are the bot's
// low-priority traffic: anyone in the bound group can make them, and each
// one takes a turn in the chat's outbox, paced at 20 messages a minute in
// a group. So they are kept out of the prompts' way:
//
//   - a stranger (someone who is not an approver, or any message from a
//     chat other than the bound one, except an approver's /pair) gets at
//     most one reply per strangerReplyEvery, and strangers together at most
//     maxStrangerReplies in that time; their other messages are ignored,
//     not answered;
//   - replies wait in a queue of their own, sent one at a time, and a reply
//     to the bound chat is sent only when no prompt is due there: no Show or
//     Update under way, and every pending approval has its message in the
//     chat (so a prompt submitted while replies wait is sent first);
//   - the queue holds at most maxQueuedReplies; a reply waits for prompts
//     at most maxReplyDefer after it was queued, so a prompt that cannot be
//     sent never silences the bot.
const (
	strangerReplyEvery = time.Minute
	maxStrangerReplies = 10
	maxQueuedReplies   = 50
	maxReplyDefer      = time.Minute
	// replyRecheck is how often a waiting reply looks again for prompts
	// still due (the gate saves a prompt's message reference just after
	// Show returns, so that one change comes without a signal).
	replyRecheck = 200 * time.Millisecond
)

// replyJob is one queued reply.
type replyJob struct {
	chat   int64
	msg    tgbotapi.MessageConfig
	plain  string
	key    string // non-empty: at most one job with this key is queued
	queued time.Time
}

// replies is the reply queue and the bookkeeping it is sent by.
type replies struct {
	mu       sync.Mutex
	jobs     []replyJob
	running  bool
	busy     int           // Show and Update calls under way
	idle     chan struct{} // closed when busy drops to 0
	answered map[int64]time.Time
	recent   []time.Time // replies to strangers within strangerReplyEvery
}

func newReplies() *replies {
	return &replies{idle: make(chan struct{}), answered: map[int64]time.Time{}}
}

// promptBegin and promptEnd bracket a Show or Update.
func (r *replies) promptBegin() {
	r.mu.Lock()
	r.busy++
	r.mu.Unlock()
}

func (r *replies) promptEnd() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.busy--; r.busy == 0 {
		close(r.idle)
		r.idle = make(chan struct{})
	}
}

// sending returns nil when no Show or Update is under way, else a channel
// closed when the last one ends.
func (r *replies) sending() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.busy == 0 {
		return nil
	}
	return r.idle
}

// admitStranger reports whether stranger user may get a reply at now, and
// counts it if so.
func (r *replies) admitStranger(user int64, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, at := range r.answered {
		if now.Sub(at) >= strangerReplyEvery {
			delete(r.answered, id)
		}
	}
	for len(r.recent) > 0 && now.Sub(r.recent[0]) >= strangerReplyEvery {
		r.recent = r.recent[1:]
	}
	if _, ok := r.answered[user]; ok || len(r.recent) >= maxStrangerReplies {
		return false
	}
	r.answered[user] = now
	r.recent = append(r.recent, now)
	return true
}

// stranger reports whether msg comes from someone whose messages are
// answered sparingly: not an approver, or from a chat other than the
// bound one.
func (b *Bot) stranger(ctx context.Context, msg *tgbotapi.Message) bool {
	if !b.authorized(msg.From) {
		return true
	}
	bound := b.chat(ctx)
	return bound == 0 || msg.Chat.ID != bound
}

// admit reports whether msg, from a stranger, may be answered now; an
// approver's messages in the bound chat always are.
func (b *Bot) admit(ctx context.Context, msg *tgbotapi.Message) bool {
	if !b.stranger(ctx, msg) {
		return true
	}
	if b.replies.admitStranger(msg.From.ID, b.now()) {
		return true
	}
	b.logger.Debug("message from a stranger ignored (rate limit)", "user", msg.From.ID, "chat", msg.Chat.ID)
	return false
}

// queueReply queues msg for chat; key, if set, makes it absorb a later
// reply with the same key while it is still queued (/pending).
func (b *Bot) queueReply(ctx context.Context, chat int64, msg tgbotapi.MessageConfig, plain, key string) {
	r := b.replies
	r.mu.Lock()
	defer r.mu.Unlock()
	if key != "" {
		for _, j := range r.jobs {
			if j.key == key {
				return
			}
		}
	}
	if len(r.jobs) >= maxQueuedReplies {
		b.logger.Warn("reply queue full; reply dropped", "chat", chat)
		return
	}
	r.jobs = append(r.jobs, replyJob{chat: chat, msg: msg, plain: plain, key: key, queued: time.Now()})
	if !r.running {
		r.running = true
		b.async(ctx, b.sendReplies)
	}
}

// sendReplies sends queued replies one at a time until the queue is empty.
func (b *Bot) sendReplies(ctx context.Context) {
	r := b.replies
	for {
		r.mu.Lock()
		if len(r.jobs) == 0 || ctx.Err() != nil {
			r.jobs, r.running = nil, false
			r.mu.Unlock()
			return
		}
		j := r.jobs[0]
		r.mu.Unlock()
		if j.chat == b.chat(ctx) {
			b.waitForPrompts(ctx, j.chat, j.queued.Add(maxReplyDefer))
		}
		r.mu.Lock()
		r.jobs = r.jobs[1:] // dequeued only now, so /pending coalesces while it waits
		r.mu.Unlock()
		if ctx.Err() != nil {
			continue
		}
		if _, err := b.sendMessage(ctx, j.chat, j.msg, j.plain); err != nil {
			b.logger.Error("reply", "err", err)
		}
	}
}

// waitForPrompts returns when no prompt is due in chat (see replies), at
// the deadline, or when ctx ends.
func (b *Bot) waitForPrompts(ctx context.Context, chat int64, deadline time.Time) {
	for {
		sending := b.replies.sending()
		if sending == nil && !b.promptsDue(ctx, chat) {
			return
		}
		left := time.Until(deadline)
		if left <= 0 {
			b.logger.Warn("a reply waited its longest for prompts; sending it", "chat", chat)
			return
		}
		t := time.NewTimer(min(left, replyRecheck))
		select {
		case <-sending: // nil while idle: only the timer or ctx wake us
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		if ctx.Err() != nil {
			return
		}
	}
}

// promptsDue reports whether some pending approval has no message in chat
// yet: the gate is about to send its prompt.
func (b *Bot) promptsDue(ctx context.Context, chat int64) bool {
	as, err := b.g.List(ctx, gate.StatusPending)
	if err != nil {
		return false // no worse than before: send the reply
	}
	for _, a := range as {
		if promptIn(a, chat) == 0 {
			return true
		}
	}
	return false
}
