package agents

import (
	"encoding/json"
	"strings"
)

// OpencodePluginFile is the plugin's file name in opencode's plugin
// directory (~/.config/opencode/plugin/ or a project's .opencode/plugin/).
const OpencodePluginFile = "approvalbot.js"

// OpencodePlugin returns the source of the opencode plugin that sends every
// tool call to approvalbot before it runs: opencode (1.x) calls each
// plugin's "tool.execute.before" hook with {tool, sessionID, callID} and
// {args}, and a hook that throws blocks the call, its message becoming the
// tool's error the model sees. The plugin pipes the call to argv (the
// absolute path of `approvalbot hook opencode`, with env added to the
// environment) and throws unless the answer is an allow; a hook that cannot
// start, or answers nothing readable, is a deny. (opencode 1.18 documents a
// "permission.ask" hook too, but never calls it.)
func OpencodePlugin(argv []string, env map[string]string) string {
	a, _ := json.Marshal(argv)
	e, _ := json.Marshal(env)
	if env == nil {
		e = []byte("{}")
	}
	return strings.NewReplacer("@ARGV@", string(a), "@ENV@", string(e)).Replace(opencodePluginSource)
}

const opencodePluginSource = `// approvalbot: every opencode tool call is decided by approvalbot before it
// runs. Written by ` + "`approvalbot install opencode`" + `, which rewrites it: do not edit.
import { spawn } from "node:child_process";

const HOOK = @ARGV@;
const ENV = @ENV@;

function decide(call) {
  return new Promise((resolve) => {
    const denied = (why) => resolve({ decision: "deny", reason: "approvalbot: " + why + ", denied to be safe" });
    let child;
    try {
      child = spawn(HOOK[0], HOOK.slice(1), { stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, ...ENV } });
    } catch (err) {
      denied("could not start " + HOOK[0] + " (" + err + ")");
      return;
    }
    let out = "";
    child.on("error", (err) => denied("could not start " + HOOK[0] + " (" + err.message + ")"));
    child.stdout.on("data", (chunk) => { out += chunk; });
    child.on("close", () => {
      try {
        resolve(JSON.parse(out));
      } catch {
        denied("no answer from the hook");
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(call));
  });
}

export const ApprovalbotPlugin = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    const answer = await decide({
      sessionID: input.sessionID,
      callID: input.callID,
      tool: input.tool,
      args: output.args,
      directory,
    });
    if (!answer || answer.decision !== "allow") {
      throw new Error((answer && answer.reason) || "approvalbot: denied");
    }
  },
});
`
