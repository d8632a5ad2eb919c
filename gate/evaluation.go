package gate

// ToolKind says what a tool's input is matched as.
type ToolKind string

// Tool kinds. See DESIGN.md, Rules.
const (
	KindShell ToolKind = "shell" // each simple command of the parsed command line
	KindRead  ToolKind = "read"  // a path tool that only reads
	KindWrite ToolKind = "write" // a path tool that writes (self-protection applies)
	KindName  ToolKind = "name"  // matched by the tool name alone
)

// Mode is an agent's approval mode.
type Mode string

// Modes. No mode ever overrides a deny.
const (
	ModeInteractive Mode = "interactive" // ask goes to a person (default)
	ModeStrict      Mode = "strict"      // every ask is denied at once
	ModeApproveAll  Mode = "approve_all" // every ask is allowed
)

// Valid reports whether m is a known mode.
func (m Mode) Valid() bool {
	return m == ModeInteractive || m == ModeStrict || m == ModeApproveAll
}

// Rule layers, in the order they are consulted.
const (
	LayerBuiltin = "builtin" // self-protection; final
	LayerAgent   = "agent"   // per-agent rules from the rules file
	LayerStatic  = "static"  // the rules file
	LayerAlways  = "always"  // rules people added with the Always button
	LayerDefault = "default" // nothing matched: ask
	LayerMode    = "mode"    // strict / approve_all turned an ask around
	LayerShell   = "shell"   // the shell analysis itself (parse error, dynamic name, hazard)
)

// RuleRef names the rule that decided something, for explanations.
type RuleRef struct {
	Layer   string `json:"layer"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	Action  Action `json:"action"`
	ID      string `json:"id,omitempty"` // the always rule's id, for the always layer
}

// Verdict is the decision on one part of a call: one simple command of a
// shell line, one redirect write, or the path or tool name of a non-shell call.
type Verdict struct {
	Kind     string   `json:"kind"`    // "command", "write", "read", "network", "path" or "tool"
	Subject  string   `json:"command"` // the text that was matched (argv re-quoted, a path, a tool name)
	Decision Action   `json:"decision"`
	Reason   string   `json:"reason"`
	Rule     *RuleRef `json:"rule,omitempty"`
	Hazard   string   `json:"hazard,omitempty"`
	Wrapper  string   `json:"wrapper,omitempty"` // the wrapper this command was unwrapped from
	Dynamic  string   `json:"dynamic,omitempty"` // why the command is not static
}

// AlwaysPattern is one rule the Always button would save.
type AlwaysPattern struct {
	Tool    string `json:"tool"`
	Pattern string `json:"pattern"`
}

// Evaluation is the gate's answer for one call, with its explanation.
type Evaluation struct {
	Decision       Action          `json:"decision"`
	Reason         string          `json:"reason"`
	Kind           ToolKind        `json:"kind"`
	Commands       []Verdict       `json:"commands"`
	OutsideProject bool            `json:"outside_project"`
	OutsidePaths   []string        `json:"outside_paths,omitempty"`
	Always         []string        `json:"always"`         // patterns only, as the button shows them
	AlwaysRules    []AlwaysPattern `json:"always_rules"`   // the same, with the tool each applies to
	Rule           *RuleRef        `json:"rule,omitempty"` // the rule that decided the whole (the first deny, else the first ask)
	// Uncertain marks an ask that comes from the analysis rather than from
	// a rule (not understood, a hazard, a protected or dynamic target): no
	// Always rule or mode answers it, only a person.
	Uncertain bool `json:"uncertain,omitempty"`
}
