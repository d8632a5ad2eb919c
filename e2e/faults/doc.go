// Package e2efaults is the fault-injection test of approvalbot: a real
// `approvalbot serve` SIGKILLed (and SIGTERMed) at random moments while
// API clients and real `approvalbot hook claude` processes re-post the same
// idempotency keys and two approvers race to decide. It checks what issue
// 14 promises: every key has exactly one approval, every client got the
// stored decision, no hook answered "unreachable", every state change is
// in the audit chain, and the chain verifies. Loopback only; every loop is
// bounded and every process it starts is stopped by it.
//
//	go test -tags e2e ./e2e/faults/
//
// APPROVALBOT_BIN runs the tests against an already built binary (to
// measure an older version) instead of building this tree.
package e2efaults
