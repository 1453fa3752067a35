// Validates Kubernetes objects against the API's OpenAPI schemas as
// compiled by the kubernetes-models package (types, formats, enums,
// required fields). Reads a JSON array of {file, doc} on stdin (the python
// test parses the YAML), prints one JSON line per object, exits 1 when an
// object is invalid or of a kind this script does not know.
import { readFileSync } from "node:fs";

const input = JSON.parse(readFileSync(0, "utf8"));
let bad = 0;
for (const { file, doc } of input) {
  const [group, version] = doc.apiVersion.includes("/") ? doc.apiVersion.split("/")
                                                         : [null, doc.apiVersion];
  const path = group === null ? `kubernetes-models/${version}/${doc.kind}`
                              : `kubernetes-models/${group}/${version}/${doc.kind}`;
  const out = { file, kind: doc.kind, apiVersion: doc.apiVersion, name: doc.metadata?.name };
  try {
    const mod = await import(path);
    const Model = mod[doc.kind] ?? mod.default;
    new Model(doc).validate();
    out.ok = true;
  } catch (e) {
    out.ok = false;
    out.error = String(e && e.message ? e.message : e);
    bad++;
  }
  console.log(JSON.stringify(out));
}
process.exit(bad > 0 ? 1 : 0);
