// Package telegramtest is a fake Telegram Bot API server for tests: an
// httptest server that answers the methods approvalbot uses (getMe,
// getUpdates, sendMessage, editMessageText, editMessageReplyMarkup,
// answerCallbackQuery, sendDocument, setWebhook, deleteWebhook), keeps the
// chats' messages as the bot left them, records every call with its time,
// lets a test inject updates (messages, button presses), and injects faults
// (429 with retry_after, dropped connections, error replies).
//
// It checks what the real API would reject: HTML that does not parse
// (unknown or unbalanced tags, bad entities), text over 4096 characters,
// callback data over 64 bytes, a wrong token.
package telegramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// Bot API limits the fake enforces, as documented at
// https://core.telegram.org/bots/api#sendmessage and
// https://core.telegram.org/bots/api#inlinekeyboardbutton.
const (
	MaxTextLen      = 4096
	MaxCallbackData = 64
)

// BotUser is the bot's own user, returned by getMe.
var botUser = tgbotapi.User{ID: 1000, IsBot: true, FirstName: "Approval", UserName: "approval_test_bot"}

// Call is one recorded API call.
type Call struct {
	Method string
	Params url.Values
	Files  map[string][]byte
	At     time.Time
}

// Message is a message as the bot last left it.
type Message struct {
	ID         int
	ChatID     int64
	Text       string
	ParseMode  string
	Keyboard   [][]tgbotapi.InlineKeyboardButton // nil when the message has no buttons
	ForceReply bool
	ReplyTo    int
	Document   []byte
	FileName   string
	Caption    string
	Edits      int
}

// Buttons returns the message's buttons' (text, data) in order.
func (m Message) Buttons() [][2]string {
	var out [][2]string
	for _, row := range m.Keyboard {
		for _, b := range row {
			d := ""
			if b.CallbackData != nil {
				d = *b.CallbackData
			}
			out = append(out, [2]string{b.Text, d})
		}
	}
	return out
}

// Fault is what the fake does instead of answering one call.
type Fault struct {
	RetryAfter  int    // answer 429 with parameters.retry_after (seconds)
	Drop        bool   // close the connection without an answer
	Code        int    // answer this error code ...
	Description string // ... with this description
}

// Server is the fake Bot API.
type Server struct {
	*httptest.Server
	Token string

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change
	calls     []Call
	messages  map[int64][]*Message
	nextMsg   int
	updates   []tgbotapi.Update
	nextUpd   int
	nextQuery int
	faults    map[string][]Fault
	answers   map[string]tgbotapi.CallbackConfig
	webhook   url.Values
}

// New starts a fake for token. It is closed when the test ends.
func New(t interface {
	Cleanup(func())
}, token string) *Server {
	s := &Server{
		Token:    token,
		changed:  make(chan struct{}),
		messages: map[int64][]*Message{},
		nextMsg:  1,
		nextUpd:  1,
		faults:   map[string][]Fault{},
		answers:  map[string]tgbotapi.CallbackConfig{},
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// APIURL is the base URL to configure the bot with ({APIURL}/bot{token}/{method}).
func (s *Server) APIURL() string { return s.URL }

// notifyLocked wakes everyone waiting for a change.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait polls cond (under the fake's lock) until it holds or ctx ends.
func (s *Server) Wait(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ok := cond()
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Calls returns the recorded calls of method ("" for all).
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.callsLocked(method)
}

func (s *Server) callsLocked(method string) []Call {
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// WaitCalls waits until method was called at least n times and returns the calls.
func (s *Server) WaitCalls(ctx context.Context, method string, n int) ([]Call, error) {
	var out []Call
	err := s.Wait(ctx, func() bool {
		out = s.callsLocked(method)
		return len(out) >= n
	})
	if err != nil {
		return out, fmt.Errorf("waiting for %d %s calls (have %d): %w", n, method, len(out), err)
	}
	return out, nil
}

// Messages returns a chat's messages, oldest first.
func (s *Server) Messages(chat int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.messagesLocked(chat)
}

func (s *Server) messagesLocked(chat int64) []Message {
	var out []Message
	for _, m := range s.messages[chat] {
		out = append(out, *m)
	}
	return out
}

// WaitMessage waits until a message of chat satisfies cond and returns it.
func (s *Server) WaitMessage(ctx context.Context, chat int64, cond func(Message) bool) (Message, error) {
	var found Message
	err := s.Wait(ctx, func() bool {
		for _, m := range s.messages[chat] {
			if cond(*m) {
				found = *m
				return true
			}
		}
		return false
	})
	return found, err
}

// Message returns one message.
func (s *Server) Message(chat int64, id int) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.findLocked(chat, id); m != nil {
		return *m, true
	}
	return Message{}, false
}

// PutMessage adds a message as if the bot had sent it earlier (a message
// from before a restart) and returns its id.
func (s *Server) PutMessage(chat int64, text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &Message{ID: s.nextMsg, ChatID: chat, Text: text}
	s.nextMsg++
	s.messages[chat] = append(s.messages[chat], m)
	s.notifyLocked()
	return m.ID
}

// Answer returns the bot's answer to a callback query, if it gave one.
func (s *Server) Answer(queryID string) (tgbotapi.CallbackConfig, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.answers[queryID]
	return a, ok
}

// WaitAnswer waits for the bot's answer to a callback query.
func (s *Server) WaitAnswer(ctx context.Context, queryID string) (tgbotapi.CallbackConfig, error) {
	var a tgbotapi.CallbackConfig
	err := s.Wait(ctx, func() bool {
		var ok bool
		a, ok = s.answers[queryID]
		return ok
	})
	return a, err
}

// Fail makes the next calls of method fail, one fault per call, in order.
func (s *Server) Fail(method string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], faults...)
}

// Webhook returns the parameters of the last setWebhook call.
func (s *Server) Webhook() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhook
}

// PushUpdate queues u for getUpdates, assigning its UpdateID, and returns it.
func (s *Server) PushUpdate(u tgbotapi.Update) tgbotapi.Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	u.UpdateID = s.nextUpd
	s.nextUpd++
	s.updates = append(s.updates, u)
	s.notifyLocked()
	return u
}

// SendText injects a text message from a user in chat, replying to the
// message replyTo (0: none), and returns the update.
func (s *Server) SendText(chat int64, from tgbotapi.User, text string, replyTo int) tgbotapi.Update {
	s.mu.Lock()
	id := s.nextMsg
	s.nextMsg++
	var reply *tgbotapi.Message
	if m := s.findLocked(chat, replyTo); m != nil {
		reply = s.apiMessageLocked(m)
	}
	s.mu.Unlock()
	msg := &tgbotapi.Message{MessageID: id, From: &from, Chat: chatOf(chat), Date: int(time.Now().Unix()), Text: text, ReplyToMessage: reply}
	if strings.HasPrefix(text, "/") {
		n := len(strings.Fields(text)[0])
		msg.Entities = []tgbotapi.MessageEntity{{Type: "bot_command", Offset: 0, Length: n}}
	}
	return s.PushUpdate(tgbotapi.Update{Message: msg})
}

// Press injects a press of the button with data on message msgID of chat
// by from, and returns the callback query id.
func (s *Server) Press(chat int64, msgID int, from tgbotapi.User, data string) string {
	s.mu.Lock()
	s.nextQuery++
	qid := "q" + strconv.Itoa(s.nextQuery)
	var msg *tgbotapi.Message
	if m := s.findLocked(chat, msgID); m != nil {
		msg = s.apiMessageLocked(m)
	} else {
		msg = &tgbotapi.Message{MessageID: msgID, Chat: chatOf(chat)}
	}
	s.mu.Unlock()
	s.PushUpdate(tgbotapi.Update{CallbackQuery: &tgbotapi.CallbackQuery{ID: qid, From: &from, Message: msg, ChatInstance: "ci", Data: data}})
	return qid
}

func chatOf(id int64) *tgbotapi.Chat {
	typ := "private"
	if id < 0 {
		typ = "supergroup"
	}
	return &tgbotapi.Chat{ID: id, Type: typ}
}

func (s *Server) findLocked(chat int64, id int) *Message {
	for _, m := range s.messages[chat] {
		if m.ID == id {
			return m
		}
	}
	return nil
}

func (s *Server) apiMessageLocked(m *Message) *tgbotapi.Message {
	out := &tgbotapi.Message{MessageID: m.ID, From: &botUser, Chat: chatOf(m.ChatID), Date: int(time.Now().Unix()), Text: m.Text}
	if m.Keyboard != nil {
		out.ReplyMarkup = &tgbotapi.InlineKeyboardMarkup{InlineKeyboard: m.Keyboard}
	}
	if m.FileName != "" {
		out.Document = &tgbotapi.Document{FileID: "f" + strconv.Itoa(m.ID), FileName: m.FileName}
		out.Caption = m.Caption
	}
	return out
}

// serve answers /bot{token}/{method}.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || token != s.Token {
		reply(w, 401, nil, "Unauthorized", 0)
		return
	}
	call := Call{Method: method, At: time.Now(), Files: map[string][]byte{}}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
		if err := r.ParseMultipartForm(32 << 20); err != nil {
			reply(w, 400, nil, "Bad Request: "+err.Error(), 0)
			return
		}
		call.Params = url.Values(r.MultipartForm.Value)
		for name, fhs := range r.MultipartForm.File {
			f, err := fhs[0].Open()
			if err == nil {
				call.Files[name], _ = io.ReadAll(f)
				f.Close()
				call.Params.Set(name+"#filename", fhs[0].Filename)
			}
		}
	} else {
		if err := r.ParseForm(); err != nil {
			reply(w, 400, nil, "Bad Request: "+err.Error(), 0)
			return
		}
		call.Params = r.PostForm
	}

	s.mu.Lock()
	s.calls = append(s.calls, call)
	var fault *Fault
	if fs := s.faults[method]; len(fs) > 0 {
		fault = &fs[0]
		s.faults[method] = fs[1:]
	}
	s.notifyLocked()
	s.mu.Unlock()

	if fault != nil {
		switch {
		case fault.Drop:
			if hj, ok := w.(http.Hijacker); ok {
				conn, _, err := hj.Hijack()
				if err == nil {
					conn.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		case fault.RetryAfter > 0:
			reply(w, 429, nil, fmt.Sprintf("Too Many Requests: retry after %d", fault.RetryAfter), fault.RetryAfter)
		default:
			reply(w, fault.Code, nil, fault.Description, 0)
		}
		return
	}

	if method == "getUpdates" {
		s.getUpdates(w, r, call.Params)
		return
	}
	s.mu.Lock()
	result, code, desc := s.handleLocked(method, call)
	if code == 0 {
		s.notifyLocked()
	}
	s.mu.Unlock()
	if code != 0 {
		reply(w, code, nil, desc, 0)
		return
	}
	reply(w, 200, result, "", 0)
}

func reply(w http.ResponseWriter, code int, result any, desc string, retryAfter int) {
	w.Header().Set("Content-Type", "application/json")
	body := map[string]any{"ok": code == 200}
	if code == 200 {
		body["result"] = result
	} else {
		body["error_code"] = code
		body["description"] = desc
		if retryAfter > 0 {
			body["parameters"] = map[string]any{"retry_after": retryAfter}
		}
	}
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(body)
}

func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, p url.Values) {
	offset, _ := strconv.Atoi(p.Get("offset"))
	timeout, _ := strconv.Atoi(p.Get("timeout"))
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(timeout)*time.Second)
	defer cancel()
	var out []tgbotapi.Update
	s.Wait(ctx, func() bool {
		// Updates below offset are confirmed: forget them, as Telegram does.
		i := 0
		for i < len(s.updates) && s.updates[i].UpdateID < offset {
			i++
		}
		s.updates = s.updates[i:]
		out = append([]tgbotapi.Update(nil), s.updates...)
		return len(out) > 0
	})
	if out == nil {
		out = []tgbotapi.Update{}
	}
	reply(w, 200, out, "", 0)
}

func (s *Server) handleLocked(method string, c Call) (any, int, string) {
	p := c.Params
	switch method {
	case "getMe":
		return botUser, 0, ""
	case "setWebhook":
		s.webhook = p
		return true, 0, ""
	case "deleteWebhook":
		s.webhook = nil
		return true, 0, ""
	case "answerCallbackQuery":
		if text := p.Get("text"); len([]rune(text)) > 200 {
			return nil, 400, "Bad Request: MESSAGE_TOO_LONG"
		}
		s.answers[p.Get("callback_query_id")] = tgbotapi.CallbackConfig{
			CallbackQueryID: p.Get("callback_query_id"), Text: p.Get("text"), ShowAlert: p.Get("show_alert") == "true"}
		return true, 0, ""
	case "sendMessage", "sendDocument":
		chat, err := strconv.ParseInt(p.Get("chat_id"), 10, 64)
		if err != nil || chat == 0 {
			return nil, 400, "Bad Request: chat not found"
		}
		m := &Message{ChatID: chat, ParseMode: p.Get("parse_mode")}
		if method == "sendMessage" {
			m.Text = p.Get("text")
			if code, desc := checkText(m.Text, m.ParseMode); code != 0 {
				return nil, code, desc
			}
		} else {
			m.Document = c.Files["document"]
			m.FileName = p.Get("document#filename")
			m.Caption = p.Get("caption")
			if m.Document == nil {
				return nil, 400, "Bad Request: there is no document in the request"
			}
		}
		if code, desc := applyMarkup(m, p.Get("reply_markup")); code != 0 {
			return nil, code, desc
		}
		m.ReplyTo, _ = strconv.Atoi(p.Get("reply_to_message_id"))
		m.ID = s.nextMsg
		s.nextMsg++
		s.messages[chat] = append(s.messages[chat], m)
		return s.apiMessageLocked(m), 0, ""
	case "editMessageText", "editMessageReplyMarkup":
		chat, _ := strconv.ParseInt(p.Get("chat_id"), 10, 64)
		id, _ := strconv.Atoi(p.Get("message_id"))
		m := s.findLocked(chat, id)
		if m == nil {
			return nil, 400, "Bad Request: message to edit not found"
		}
		next := *m
		if method == "editMessageText" {
			next.Text, next.ParseMode = p.Get("text"), p.Get("parse_mode")
			if code, desc := checkText(next.Text, next.ParseMode); code != 0 {
				return nil, code, desc
			}
		}
		next.Keyboard = nil
		if code, desc := applyMarkup(&next, p.Get("reply_markup")); code != 0 {
			return nil, code, desc
		}
		if next.Text == m.Text && keyboardEqual(next.Keyboard, m.Keyboard) {
			return nil, 400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"
		}
		next.Edits++
		*m = next
		return s.apiMessageLocked(m), 0, ""
	}
	return nil, 404, "Not Found: method " + method
}

func keyboardEqual(a, b [][]tgbotapi.InlineKeyboardButton) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// applyMarkup parses reply_markup into m.
func applyMarkup(m *Message, raw string) (int, string) {
	if raw == "" {
		return 0, ""
	}
	var mk struct {
		InlineKeyboard [][]tgbotapi.InlineKeyboardButton `json:"inline_keyboard"`
		ForceReply     bool                              `json:"force_reply"`
	}
	if err := json.Unmarshal([]byte(raw), &mk); err != nil {
		return 400, "Bad Request: can't parse reply keyboard markup JSON object"
	}
	for _, row := range mk.InlineKeyboard {
		for _, b := range row {
			if b.Text == "" {
				return 400, "Bad Request: BUTTON_TEXT_EMPTY"
			}
			if b.CallbackData != nil && (len(*b.CallbackData) > MaxCallbackData || *b.CallbackData == "") {
				return 400, "Bad Request: BUTTON_DATA_INVALID"
			}
		}
	}
	if len(mk.InlineKeyboard) > 0 {
		m.Keyboard = mk.InlineKeyboard
	}
	m.ForceReply = mk.ForceReply
	return 0, ""
}

// checkText rejects what Telegram rejects: empty or too long text, and HTML
// it cannot parse.
func checkText(text, mode string) (int, string) {
	plain := text
	if mode == "HTML" {
		var err error
		plain, err = ParseHTML(text)
		if err != nil {
			return 400, "Bad Request: can't parse entities: " + err.Error()
		}
	}
	if strings.TrimSpace(plain) == "" {
		return 400, "Bad Request: message text is empty"
	}
	if n := utf16Len(plain); n > MaxTextLen {
		return 400, "Bad Request: message is too long"
	}
	return 0, ""
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
