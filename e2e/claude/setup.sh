#!/usr/bin/env bash
# Installs the pinned Claude Code CLI for the end-to-end test into a local
# prefix (e2e/claude/.prefix, or $CLAUDE_E2E_PREFIX) from the npm registry,
# and checks it runs. Prints the binary's path.
set -euo pipefail
CLAUDE_CODE_VERSION="${CLAUDE_CODE_VERSION:-2.1.330}"
here="$(cd "$(dirname "$0")" && pwd)"
prefix="${CLAUDE_E2E_PREFIX:-$here/.prefix}"
bin="$prefix/node_modules/.bin/claude"
if [ ! -x "$bin" ] || ! "$bin" --version 2>/dev/null | grep -q "^$CLAUDE_CODE_VERSION "; then
  mkdir -p "$prefix"
  # The package ships the native binary in a per-platform optional
  # dependency; no postinstall download is needed.
  npm install --prefix "$prefix" --no-fund --no-audit --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >&2
fi
got="$("$bin" --version)"
case "$got" in
  "$CLAUDE_CODE_VERSION "*) ;;
  *) echo "setup.sh: want Claude Code $CLAUDE_CODE_VERSION, got: $got" >&2; exit 1 ;;
esac
echo "$bin"
