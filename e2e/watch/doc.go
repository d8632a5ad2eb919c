// Package e2ewatch holds the end-to-end test of `approvalbot watch`: a real
// `approvalbot serve`, the built `approvalbot watch` in a tmux pane, and
// clients waiting on the API for the decisions made with tmux send-keys.
// It needs tmux and runs only with the e2e build tag:
//
//	go test -tags e2e ./e2e/watch/
package e2ewatch
