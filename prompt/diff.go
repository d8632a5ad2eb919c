package prompt

import (
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines surround each change, as in
// `diff -u`.
const diffContext = 3

// maxDiffCells bounds the LCS table (old lines × new lines); beyond it the
// diff shows all old lines removed and all new lines added, which is
// correct, only less compact.
const maxDiffCells = 4_000_000

// Diff returns a compact unified diff of an edit of path from oldS to newS.
// Line numbers are relative to the edited fragment, since only the
// fragment is known.
func Diff(path, oldS, newS string) string {
	a, b := splitLines(oldS), splitLines(newS)
	ops := diffOps(a, b)
	var out strings.Builder
	if path != "" {
		fmt.Fprintf(&out, "--- %s\n+++ %s\n", path, path)
	}
	// Group ops into hunks with diffContext lines of context.
	i := 0
	for i < len(ops) {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-diffContext, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			// Count the run of unchanged lines; a short run joins hunks.
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run < len(ops) && run-end <= 2*diffContext {
				end = run
				continue
			}
			end = min(end+diffContext, len(ops))
			break
		}
		oldStart, newStart := ops[start].oldLine, ops[start].newLine
		var oldN, newN int
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				oldN++
			}
			if op.kind != '-' {
				newN++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", oldStart, oldN, newStart, newN)
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(op.text)
			out.WriteByte('\n')
		}
		i = end
	}
	return strings.TrimSuffix(out.String(), "\n")
}

type diffOp struct {
	kind             byte // ' ', '-', '+'
	text             string
	oldLine, newLine int // 1-based position in old and new where this op sits
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffOps returns the edit script from a to b by longest common subsequence.
func diffOps(a, b []string) []diffOp {
	// Trim the common prefix and suffix first: edits are usually local.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]

	var ops []diffOp
	oi, ni := 1, 1
	emit := func(kind byte, text string) {
		ops = append(ops, diffOp{kind: kind, text: text, oldLine: oi, newLine: ni})
		if kind != '+' {
			oi++
		}
		if kind != '-' {
			ni++
		}
	}
	for _, l := range a[:pre] {
		emit(' ', l)
	}
	if len(ma)*len(mb) > maxDiffCells {
		for _, l := range ma {
			emit('-', l)
		}
		for _, l := range mb {
			emit('+', l)
		}
	} else {
		// lcs[i][j] is the LCS length of ma[i:] and mb[j:].
		lcs := make([][]int, len(ma)+1)
		for i := range lcs {
			lcs[i] = make([]int, len(mb)+1)
		}
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				emit(' ', ma[i])
				i++
				j++
			case i < len(ma) && (j == len(mb) || lcs[i+1][j] >= lcs[i][j+1]):
				emit('-', ma[i])
				i++
			default:
				emit('+', mb[j])
				j++
			}
		}
	}
	for _, l := range a[len(a)-suf:] {
		emit(' ', l)
	}
	return ops
}
