package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bash evaluates the text of a variable used in arithmetic as an
// expression, recursively, and runs any $(...) in an array subscript it
// meets there (`x='a[$(cmd)]'; echo $((x))`). So an arithmetic expression
// is understood only when every operand is a number literal, or a variable
// the line itself set to an integer.

// arith judges one arithmetic expression (nil is fine).
func (a *analyzer) arith(x syntax.ArithmExpr) {
	switch x := x.(type) {
	case nil:
	case *syntax.BinaryArithm:
		if isArithAssign(x.Op) {
			a.arithTarget(x.X)
		} else {
			a.arith(x.X)
		}
		a.arith(x.Y)
	case *syntax.UnaryArithm:
		switch x.Op {
		case syntax.Inc, syntax.Dec:
			a.arithTarget(x.X)
		default:
			a.arith(x.X)
		}
	case *syntax.ParenArithm:
		a.arith(x.X)
	case *syntax.Word:
		a.arithWord(x)
	default:
		a.notUnderstood("an arithmetic expression of this form")
	}
}

func isArithAssign(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
		syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
		return true
	}
	return false
}

// arithTarget judges the variable an arithmetic assignment sets: a plain
// name the line may set; from then on it holds an integer.
func (a *analyzer) arithTarget(x syntax.ArithmExpr) {
	if a.inWord > 0 {
		// $((x=...)) in a word: same ordering problem as ${x:=...}.
		a.notUnderstood("an assignment inside a word ($((...=...)))")
	}
	w, ok := x.(*syntax.Word)
	name := ""
	if ok {
		name = w.Lit()
	}
	if !ok || !validName(name) {
		a.notUnderstood("an arithmetic assignment to something other than a plain variable")
		return
	}
	if why := assignable(name, false); why != "" {
		a.notUnderstood("arithmetic assigns " + why)
		return
	}
	if !a.numericVar(name) {
		if _, set := a.st.vars[name]; set {
			// Its text is evaluated before the assignment (x+=1).
			a.notUnderstood("arithmetic on $" + name + ", whose value is not a known integer")
		}
	}
	a.st.set(name, value{f: field{s: Dyn, dyn: true, expanded: true, numeric: true}, numeric: true})
}

// arithWord judges one operand.
func (a *analyzer) arithWord(w *syntax.Word) {
	if lit := w.Lit(); lit != "" && len(w.Parts) == 1 {
		if !a.arithText(lit) {
			a.notUnderstood("arithmetic on " + lit + ", whose value is not a known integer")
		}
		return
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.ParamExp:
			f := a.res.single(&syntax.Word{Parts: []syntax.WordPart{p}}, ctxNoSplit)
			if p.Length || f.numeric {
				continue
			}
			if !f.dyn && a.arithText(f.s) {
				continue
			}
			name := "a parameter"
			if p.Param != nil {
				name = "$" + p.Param.Value
			}
			a.notUnderstood("arithmetic on " + name + ", whose value is not a known integer")
		case *syntax.ArithmExp:
			a.arith(p.X)
		case *syntax.DblQuoted:
			a.arithWord(&syntax.Word{Parts: p.Parts})
		case *syntax.Lit:
			if !a.arithText(p.Value) {
				a.notUnderstood("arithmetic on " + p.Value + ", whose value is not a known integer")
			}
		default:
			// $(...) or `...`: its output is evaluated as an expression.
			a.res.single(&syntax.Word{Parts: []syntax.WordPart{p}}, ctxNoSplit)
			a.notUnderstood("arithmetic on the output of a command")
		}
	}
}

// arithText reports text bash evaluates to an integer without running
// anything: a number literal, or a variable known to hold one.
func (a *analyzer) arithText(s string) bool {
	s = strings.TrimSpace(s)
	if isArithLiteral(s) {
		return true
	}
	return validName(s) && a.numericVar(s)
}

// isArithLiteral reports a number literal (decimal, 0x.., 0.., BASE#N) or
// nothing (which bash reads as 0).
func isArithLiteral(s string) bool {
	if s == "" {
		return true
	}
	if b, n, ok := strings.Cut(s, "#"); ok {
		return isDigits(b) && n != "" && strings.Trim(n, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@_") == ""
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		return rest != "" && strings.Trim(rest, "0123456789abcdef") == ""
	}
	return isDigits(s)
}

// validName reports a shell variable name.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// test judges a [[ ]] expression: -eq and friends evaluate their operands
// as arithmetic, -v evaluates a subscript.
func (a *analyzer) test(x syntax.TestExpr) {
	switch x := x.(type) {
	case nil:
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.AndTest, syntax.OrTest:
			a.test(x.X)
			a.branch(func() { a.test(x.Y) })
		case syntax.TsEql, syntax.TsNeq, syntax.TsLss, syntax.TsLeq, syntax.TsGtr, syntax.TsGeq:
			a.testArith(x.X)
			a.testArith(x.Y)
		case syntax.TsMatch, syntax.TsMatchShort, syntax.TsNoMatch, syntax.TsReMatch:
			a.test(x.X)
			if w, ok := x.Y.(*syntax.Word); ok {
				a.res.single(w, ctxPattern)
			} else {
				a.test(x.Y)
			}
			if x.Op == syntax.TsReMatch {
				// =~ sets BASH_REMATCH (bash), match, mbegin, mend and
				// MATCH, MBEGIN, MEND (zsh).
				for _, n := range [...]string{"BASH_REMATCH", "match", "mbegin", "mend", "MATCH", "MBEGIN", "MEND"} {
					a.st.setUnknown(n)
				}
			}
		default:
			a.test(x.X)
			a.test(x.Y)
		}
	case *syntax.UnaryTest:
		switch x.Op {
		case syntax.TsVarSet, syntax.TsRefVar:
			w, ok := x.X.(*syntax.Word)
			if !ok || !validName(w.Lit()) {
				a.notUnderstood("[[ -v ]] on something other than a plain variable name")
			}
		case syntax.TsFdTerm:
			a.testArith(x.X) // zsh evaluates -t's operand as arithmetic
		default:
			a.test(x.X)
		}
	case *syntax.ParenTest:
		a.test(x.X)
	case *syntax.Word:
		a.res.single(x, ctxNoSplit)
	default:
		a.notUnderstood("a [[ ]] expression of this form")
	}
}

// testArith judges an operand of [[ -eq ]]: bash evaluates its text as an
// arithmetic expression.
func (a *analyzer) testArith(x syntax.TestExpr) {
	w, ok := x.(*syntax.Word)
	if !ok {
		a.notUnderstood("a [[ ]] comparison of this form")
		return
	}
	f := a.res.single(w, ctxNoSplit)
	if f.numeric || !f.dyn && a.arithText(f.s) {
		return
	}
	a.notUnderstood("[[ ]] compares " + displayField(f) + " as a number, and its value is not a known integer")
}

func displayField(f field) string {
	if f.dyn {
		return "a value only known at run time"
	}
	return "`" + f.s + "`"
}
