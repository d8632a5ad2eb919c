// approvalbot: every opencode tool call is decided by approvalbot before it
// runs. Written by `approvalbot install opencode`, which rewrites it: do not edit.
import { spawn } from "node:child_process";

const HOOK = ["/opt/gone/approvalbot","hook","opencode"];
const ENV = {};
