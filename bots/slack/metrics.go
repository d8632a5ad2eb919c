package slack

// OnSendFailure sets f to hear of every failed send to slack: retrying is
// true when it will be tried again, false when it failed for good. serve
// feeds /metrics from it.
func (b *Bot) OnSendFailure(f func(retrying bool)) { b.out.OnFailure(f) }
