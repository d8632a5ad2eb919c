package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Grouped views on a GroupNotifier. A session's first pending call gets a
// prompt of its own; when a second one is pending, that message becomes
// the session's grouped view (edited in place, so the chat does not fill
// up) and lists every pending call of the session, up to MaxBatch, and the
// calls decided since, with their outcomes. Each time its pending calls
// change, the view is rendered with a new Batch, so "Approve all" decides
// what the person saw. When none is pending any more the view shows every
// outcome and its state is pruned, with its batches.
//
// The view's state lives in the value store (groupRecord), written only by
// the frontend's queue goroutine, so it survives restarts and needs no lock.

const keyGroupPrefix = "gate.group."

// groupRecord is the state of one frontend's grouped view of a session.
type groupRecord struct {
	Ref     MessageRef    `json:"ref"`
	Agent   string        `json:"agent"`
	Session string        `json:"session"`
	Items   []string      `json:"items"`             // every call in the message, in order
	Batch   string        `json:"batch,omitempty"`   // the batch its buttons decide now
	Members []BatchMember `json:"members,omitempty"` // that batch's members
	Batches []string      `json:"batches,omitempty"` // every batch made for it, pruned with it
	Shown   string        `json:"shown,omitempty"`   // fingerprint of the last rendering
}

// groupKey names a session's grouped view on frontend.
func groupKey(frontend, agent, session string) string {
	h := sha256.Sum256([]byte(agent + "\x00" + session))
	return frontend + "." + hex.EncodeToString(h[:12])
}

func (q *notifierQueue) groups() bool {
	gn, ok := q.n.(GroupNotifier)
	return ok && gn.Groups()
}

func (q *notifierQueue) loadGroup(ctx context.Context, key string) (*groupRecord, error) {
	raw, err := q.g.store.GetValue(ctx, keyGroupPrefix+key)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r groupRecord
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return nil, fmt.Errorf("decode grouped view %s: %w", key, err)
	}
	return &r, nil
}

func (q *notifierQueue) saveGroup(ctx context.Context, key string, r *groupRecord) error {
	if r == nil {
		return q.g.store.PutValue(ctx, keyGroupPrefix+key, "")
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return q.g.store.PutValue(ctx, keyGroupPrefix+key, string(raw))
}

// syncGrouped shows a in its session's grouped view if it belongs in one,
// and reports whether it did (else the caller shows a on its own).
func (q *notifierQueue) syncGrouped(ctx context.Context, a *Approval, restarted time.Time) bool {
	key := ""
	for _, m := range a.Messages {
		if m.Frontend == q.n.Name() && m.Group != "" {
			key = m.Group
		}
	}
	if key == "" && (a.Status.Final() || a.SessionID == "") {
		return false
	}
	if key == "" {
		key = groupKey(q.n.Name(), a.Agent, a.SessionID)
	}
	in, err := q.syncGroup(ctx, key, a, restarted)
	if err != nil {
		if ctx.Err() == nil {
			q.logger.Error("grouped view", "approval", a.ID, "err", err)
		}
		return true // retried on the session's next change
	}
	return in
}

// syncGroup brings the grouped view key up to date and reports whether a
// is in it.
func (q *notifierQueue) syncGroup(ctx context.Context, key string, a *Approval, restarted time.Time) (bool, error) {
	rec, err := q.loadGroup(ctx, key)
	if err != nil {
		return false, err
	}
	if rec == nil && a.Status.Final() {
		return true, nil // its view was completed and pruned
	}
	agent, session := a.Agent, a.SessionID
	if rec != nil {
		agent, session = rec.Agent, rec.Session
	}
	pending, err := q.g.SessionPending(ctx, agent, session)
	if err != nil {
		return false, err
	}
	fresh := rec == nil
	if fresh {
		if len(pending) < 2 {
			return false, nil
		}
		rec = &groupRecord{Agent: agent, Session: session}
	}

	// The items: what the message listed, then the session's other
	// pending calls, while there is room. A call with a prompt of its own
	// keeps it, except the one whose message a new view takes over.
	var adopt *MessageRef
	items := map[string]*Approval{}
	var order []string
	for _, id := range rec.Items {
		it, err := q.g.store.GetApproval(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue // pruned by retention
		}
		if err != nil {
			return true, err
		}
		items[id] = it
		order = append(order, id)
	}
	count := 0
	for _, id := range order {
		if !items[id].Status.Final() {
			count++
		}
	}
	if !fresh && count == 0 {
		// Everything the message listed is decided: it shows the outcomes
		// and is done; calls pending now get a new message, so the person
		// is told of them.
		if err := q.showGroup(ctx, key, rec, order, items, nil, restarted); err != nil {
			return true, err
		}
		if a.Status.Final() {
			return true, nil
		}
		return q.syncGroup(ctx, key, a, restarted)
	}
	for _, p := range pending {
		if _, ok := items[p.ID]; ok || count >= MaxBatch {
			continue
		}
		own := q.ref(p)
		if own != nil && own.Group != key {
			if !fresh || adopt != nil {
				continue
			}
			adopt = own
		}
		items[p.ID] = p
		order = append(order, p.ID)
		count++
	}
	if _, ok := items[a.ID]; !ok {
		if fresh {
			return false, nil
		}
		return a.Status.Final(), nil
	}
	return true, q.showGroup(ctx, key, rec, trimFinal(order, items), items, adopt, restarted)
}

// showGroup renders the grouped view key of the calls order (items by
// id), in its message, in adopt's (a single prompt it takes over), or in
// a new one, and saves (or, once nothing is pending, prunes) its state.
func (q *notifierQueue) showGroup(ctx context.Context, key string, rec *groupRecord, order []string,
	items map[string]*Approval, adopt *MessageRef, restarted time.Time) error {
	agent, session := rec.Agent, rec.Session
	var list, live []*Approval
	for _, id := range order {
		list = append(list, items[id])
		if !items[id].Status.Final() {
			live = append(live, items[id])
		}
	}
	if len(list) == 0 {
		return q.pruneGroup(ctx, key, rec)
	}
	v := View{Items: list, Approval: list[0], Restarted: restarted}
	if len(live) > 0 {
		v.Approval = live[0]
	}
	if len(live) >= 2 {
		members := make([]BatchMember, len(live))
		for i, it := range live {
			members[i] = BatchMember{ID: it.ID, Digest: it.Digest}
		}
		if rec.Batch != "" && slices.Equal(members, rec.Members) {
			v.Batch = &Batch{ID: rec.Batch, Agent: agent, SessionID: session, Members: members}
		} else {
			b, err := q.g.saveBatch(ctx, agent, session, members)
			if err != nil {
				return err
			}
			v.Batch = b
			rec.Batch, rec.Members = b.ID, members
			rec.Batches = append(rec.Batches, b.ID)
		}
	} else {
		rec.Batch, rec.Members = "", nil
	}

	fp := fingerprint(list, v.Batch, restarted)
	if rec.Ref.MessageID != "" && fp == rec.Shown {
		return nil
	}
	ref := rec.Ref
	if ref.MessageID == "" && adopt != nil {
		ref = *adopt
	}
	if ref.MessageID == "" || !q.update(ctx, ref, v) {
		if len(live) == 0 {
			// Nothing left to decide and the message is gone: nothing to show.
			return q.pruneGroup(ctx, key, rec)
		}
		shown, err := q.n.Show(ctx, v)
		if err != nil {
			return fmt.Errorf("show grouped view: %w", err)
		}
		ref = shown
	}
	// The message is out: what refers to it is saved even while the gate
	// closes (see sync).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refSaveGrace)
	defer cancel()
	ref.Frontend, ref.Group = q.n.Name(), key
	if ref.SentAt.IsZero() {
		ref.SentAt = q.g.now()
	}
	rec.Ref, rec.Items, rec.Shown = ref, order, fp
	if len(live) == 0 {
		return q.pruneGroup(ctx, key, rec)
	}
	if err := q.saveGroup(ctx, key, rec); err != nil {
		return fmt.Errorf("save grouped view: %w", err)
	}
	for _, it := range live {
		if r := q.ref(it); r == nil || *r != ref {
			q.saveRef(ctx, it.ID, ref)
		}
	}
	return nil
}

// ref is the message this frontend has for a, or nil.
func (q *notifierQueue) ref(a *Approval) *MessageRef {
	for i := range a.Messages {
		if a.Messages[i].Frontend == q.n.Name() {
			return &a.Messages[i]
		}
	}
	return nil
}

// pruneGroup forgets a completed grouped view and its batches.
func (q *notifierQueue) pruneGroup(ctx context.Context, key string, rec *groupRecord) error {
	for _, id := range rec.Batches {
		q.g.forgetBatch(ctx, id)
	}
	return q.saveGroup(ctx, key, nil)
}

// trimFinal keeps at most MaxBatch decided calls in a view (the latest),
// so a long session's message stays readable.
func trimFinal(order []string, items map[string]*Approval) []string {
	final := 0
	for _, id := range order {
		if items[id].Status.Final() {
			final++
		}
	}
	out := order[:0:0]
	for _, id := range order {
		if items[id].Status.Final() && final > MaxBatch {
			final--
			continue
		}
		out = append(out, id)
	}
	return out
}

// fingerprint says what a grouped view shows, so an unchanged view is not
// edited again.
func fingerprint(items []*Approval, b *Batch, restarted time.Time) string {
	var s strings.Builder
	for _, it := range items {
		s.WriteString(it.ID + "=" + string(it.Status) + ";")
	}
	if b != nil {
		s.WriteString("batch=" + b.ID)
	}
	if !restarted.IsZero() {
		s.WriteString(";restarted")
	}
	return s.String()
}
