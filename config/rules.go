package config

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/tailscale/hujson"

	"approvalbot/gate"
)

// DefaultRulesName is how the embedded default rules are named in messages.
const DefaultRulesName = "(default rules)"

//go:embed default_rules.jsonc
var defaultRules []byte

// DefaultRules returns the embedded default rules file (JSONC), used when no
// rules file is configured.
func DefaultRules() []byte { return bytes.Clone(defaultRules) }

// LoadRules reads and parses the rules file at path. The file itself is
// added to the spec's Protected paths, so no agent can rewrite it.
func LoadRules(path, home string) (gate.PolicySpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return gate.PolicySpec{}, fmt.Errorf("read rules file: %w", err)
	}
	spec, err := ParseRules(path, data, home)
	if err != nil {
		return gate.PolicySpec{}, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		spec.Protected = append(spec.Protected, abs)
	}
	return spec, nil
}

// ParseRules parses a rules file (JSONC: comments and trailing commas
// allowed) named name in messages. Key order is kept, since the last
// matching rule wins. The top level maps a tool name glob to an action
// ("allow", "deny", "ask") or to an object of pattern -> action; the
// reserved key "agents" maps agent names to objects of the same shape, and
// "kinds" maps tool names to "shell", "read", "write" or "name".
//
// Errors name the file and line: unknown actions, values of the wrong type,
// duplicate keys, and patterns that do not compile (the spec is compiled
// with gate.Compile before it is returned).
func ParseRules(name string, data []byte, home string) (gate.PolicySpec, error) {
	p := parser{name: name, data: data}
	spec, err := p.parse(home)
	if err != nil {
		return gate.PolicySpec{}, err
	}
	if _, err := gate.Compile(spec); err != nil {
		return gate.PolicySpec{}, err
	}
	return spec, nil
}

type parser struct {
	name  string
	data  []byte
	lines []int // offsets of the newlines in data, for line numbers
}

// errorf prefixes an error with file:line of the value at offset.
func (p *parser) errorf(offset int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.name, p.line(offset), fmt.Sprintf(format, args...))
}

func (p *parser) line(offset int) int {
	if p.lines == nil {
		p.lines = []int{}
		for i, c := range p.data {
			if c == '\n' {
				p.lines = append(p.lines, i)
			}
		}
	}
	n, _ := slices.BinarySearch(p.lines, offset)
	return n + 1
}

func (p *parser) parse(home string) (gate.PolicySpec, error) {
	spec := gate.PolicySpec{File: p.name, Home: home}
	v, err := hujson.Parse(p.data)
	if err != nil {
		return spec, fmt.Errorf("%s: %w", p.name, err)
	}
	top, ok := v.Value.(*hujson.Object)
	if !ok {
		return spec, p.errorf(v.StartOffset, "the rules file must be a JSON object of tool name -> rules")
	}
	seen := make(map[string]bool, len(top.Members))
	for i := range top.Members {
		m := &top.Members[i]
		key, err := p.key(m, seen)
		if err != nil {
			return spec, err
		}
		switch key {
		case "agents":
			if spec.Agents, err = p.agents(&m.Value); err != nil {
				return spec, err
			}
		case "kinds":
			if spec.ToolKinds, err = p.kinds(&m.Value); err != nil {
				return spec, err
			}
		default:
			if spec.Rules, err = p.entry(key, &m.Value, spec.Rules); err != nil {
				return spec, err
			}
		}
	}
	return spec, nil
}

// key returns an object member's name, rejecting duplicates.
func (p *parser) key(m *hujson.ObjectMember, seen map[string]bool) (string, error) {
	lit, ok := m.Name.Value.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		return "", p.errorf(m.Name.StartOffset, "object key is not a string")
	}
	k := lit.String()
	if seen[k] {
		return "", p.errorf(m.Name.StartOffset, "duplicate key %s", strconv.Quote(k))
	}
	seen[k] = true
	return k, nil
}

// entry parses one tool entry: an action, or an object of pattern -> action.
func (p *parser) entry(tool string, v *hujson.Value, out []gate.RuleSpec) ([]gate.RuleSpec, error) {
	if tool == "" {
		return nil, p.errorf(v.StartOffset, "empty tool name")
	}
	switch val := v.Value.(type) {
	case hujson.Literal:
		a, err := p.action(v, tool)
		if err != nil {
			return nil, err
		}
		return append(out, gate.RuleSpec{Tool: tool, Pattern: "*", Action: a, File: p.name, Line: p.line(v.StartOffset)}), nil
	case *hujson.Object:
		seen := make(map[string]bool, len(val.Members))
		for i := range val.Members {
			m := &val.Members[i]
			pat, err := p.key(m, seen)
			if err != nil {
				return nil, err
			}
			if pat == "" {
				return nil, p.errorf(m.Name.StartOffset, "%s: empty pattern", tool)
			}
			a, err := p.action(&m.Value, tool+": "+strconv.Quote(pat))
			if err != nil {
				return nil, err
			}
			out = append(out, gate.RuleSpec{Tool: tool, Pattern: pat, Action: a, File: p.name, Line: p.line(m.Value.StartOffset)})
		}
		return out, nil
	}
	return nil, p.errorf(v.StartOffset, "%s: want an action (\"allow\", \"deny\", \"ask\") or an object of pattern -> action", strconv.Quote(tool))
}

// action parses an action string.
func (p *parser) action(v *hujson.Value, what string) (gate.Action, error) {
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		return "", p.errorf(v.StartOffset, "%s: want an action (\"allow\", \"deny\", \"ask\") or an object of pattern -> action", what)
	}
	a := gate.Action(lit.String())
	if !a.Valid() {
		return "", p.errorf(v.StartOffset, "%s: unknown action %s (want \"allow\", \"deny\" or \"ask\")", what, strconv.Quote(string(a)))
	}
	return a, nil
}

// agents parses "agents": {"name": {tool entries}}.
func (p *parser) agents(v *hujson.Value) (map[string][]gate.RuleSpec, error) {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, p.errorf(v.StartOffset, `"agents": want an object of agent name -> rules`)
	}
	out := make(map[string][]gate.RuleSpec, len(obj.Members))
	seen := make(map[string]bool, len(obj.Members))
	for i := range obj.Members {
		m := &obj.Members[i]
		agent, err := p.key(m, seen)
		if err != nil {
			return nil, err
		}
		if agent == "" {
			return nil, p.errorf(m.Name.StartOffset, `"agents": empty agent name`)
		}
		body, ok := m.Value.Value.(*hujson.Object)
		if !ok {
			return nil, p.errorf(m.Value.StartOffset, "agent %s: want an object of tool name -> rules", strconv.Quote(agent))
		}
		rules := []gate.RuleSpec{}
		tseen := make(map[string]bool, len(body.Members))
		for j := range body.Members {
			tm := &body.Members[j]
			tool, err := p.key(tm, tseen)
			if err != nil {
				return nil, err
			}
			if tool == "agents" || tool == "kinds" {
				return nil, p.errorf(tm.Name.StartOffset, "agent %s: %q is only allowed at the top level", strconv.Quote(agent), tool)
			}
			if rules, err = p.entry(tool, &tm.Value, rules); err != nil {
				return nil, err
			}
		}
		out[agent] = rules
	}
	return out, nil
}

// kinds parses "kinds": {"ToolName": "shell|read|write|name"}.
func (p *parser) kinds(v *hujson.Value) (map[string]gate.ToolKind, error) {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, p.errorf(v.StartOffset, `"kinds": want an object of tool name -> kind`)
	}
	out := make(map[string]gate.ToolKind, len(obj.Members))
	seen := make(map[string]bool, len(obj.Members))
	for i := range obj.Members {
		m := &obj.Members[i]
		tool, err := p.key(m, seen)
		if err != nil {
			return nil, err
		}
		if tool == "" {
			return nil, p.errorf(m.Name.StartOffset, `"kinds": empty tool name`)
		}
		lit, ok := m.Value.Value.(hujson.Literal)
		k := gate.ToolKind(lit.String())
		if !ok || lit.Kind() != '"' || !k.Valid() {
			return nil, p.errorf(m.Value.StartOffset, "kind of %s: want \"shell\", \"read\", \"write\" or \"name\"", strconv.Quote(tool))
		}
		out[tool] = k
	}
	return out, nil
}
