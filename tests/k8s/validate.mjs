// Schema validation of Kubernetes objects, offline: every object is validated against the OpenAPI schema
// of its apiVersion and kind (kubernetes-models, the Kubernetes 1.33 schemas, pinned in package.json), and
// strictly: a field the API does not have is an error, as under `kubectl apply --validate=strict` (the
// default since 1.27; the OpenAPI schemas themselves allow any extra property). The fields of each type
// are read from the package's TypeScript declarations (every *.d.ts interface is one API type).
//
//   node validate.mjs NODE_MODULES_PARENT OBJECTS.json
//
// NODE_MODULES_PARENT: the folder whose node_modules holds kubernetes-models (the test's npm cache).
// OBJECTS.json: [{"file": ..., "index": ..., "object": {...}}, ...] (tests/e2e/test_k8s.py converts YAML).
// Prints one JSON line per object: {"file", "index", "kind", "name", "ok", "error"}; exits 0 when every
// object is valid, 1 when one is not (or its kind is unknown), 2 on bad usage or unreadable input.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";

if (process.argv.length !== 4) {
  console.error("usage: node validate.mjs NODE_MODULES_PARENT OBJECTS.json");
  process.exit(2);
}
const require = createRequire(join(process.argv[2], "package.json"));

let items;
try {
  items = JSON.parse(readFileSync(process.argv[3], "utf8"));
} catch (e) {
  console.error(`validate.mjs: cannot read ${process.argv[3]}: ${e.message}`);
  process.exit(2);
}

// apiVersion "v1" -> kubernetes-models/v1; "batch/v1" -> kubernetes-models/batch/v1.
function modelClass(apiVersion, kind) {
  if (typeof apiVersion !== "string" || typeof kind !== "string" || !/^[A-Za-z0-9.\/-]+$/.test(apiVersion)) {
    throw new Error(`no apiVersion/kind (${apiVersion}/${kind})`);
  }
  let mod;
  try {
    mod = require(`kubernetes-models/${apiVersion}`);
  } catch (e) {
    throw new Error(`unknown apiVersion ${apiVersion}`);
  }
  const cls = mod[kind];
  if (typeof cls !== "function") throw new Error(`unknown kind ${kind} in ${apiVersion}`);
  return cls;
}

// --- strict fields from the TypeScript declarations ---------------------------------------------------------
const parsed = new Map(); // .d.ts path -> { imports: Map(name -> .d.ts path), ifaces: Map(name -> Map(field -> type)), main }

function dtsPath(spec, fromDir) {
  if (spec.startsWith(".")) return resolve(fromDir, spec + ".d.ts");
  return require.resolve(spec).replace(/\.js$/, ".d.ts");
}

// The fields of an interface body: `"name"?: TYPE;` where TYPE may span lines ({ [key: string]: X; }).
function fieldsOf(body) {
  const fields = new Map();
  const re = /"([^"]+)"\??:\s*/g;
  let m;
  while ((m = re.exec(body))) {
    let depth = 0, i = re.lastIndex;
    for (; i < body.length; i++) {
      const c = body[i];
      if (c === "{" || c === "<" || c === "(" || c === "[") depth++;
      else if (c === "}" || c === ">" || c === ")" || c === "]") depth--;
      else if (c === ";" && depth === 0) break;
    }
    fields.set(m[1], body.slice(re.lastIndex, i).trim());
    re.lastIndex = i + 1;
  }
  return fields;
}

function parse(path) {
  if (parsed.has(path)) return parsed.get(path);
  const text = readFileSync(path, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
  const imports = new Map();
  for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*"([^"]+)"/g)) {
    for (const part of m[1].split(",")) {
      const name = part.trim().split(/\s+as\s+/).pop();
      if (name) imports.set(name, { spec: m[2], dir: dirname(path) });
    }
  }
  const ifaces = new Map();
  let main = null;
  for (const m of text.matchAll(/export interface (\w+)(?:\s+extends\s+[^{]+)?\s*\{([\s\S]*?)\n\}/g)) {
    ifaces.set(m[1], fieldsOf(m[2]));
    main ??= m[1];
  }
  const out = { imports, ifaces, main };
  parsed.set(path, out);
  return out;
}

function isPlain(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// Reports the fields of `value` that type `type` (as written in the .d.ts at `path`) does not have.
function strictType(value, type, path, where, errors) {
  type = type.trim();
  let m;
  if ((m = /^Array<([\s\S]+)>$/.exec(type))) {
    if (Array.isArray(value)) value.forEach((v, i) => strictType(v, m[1], path, `${where}[${i}]`, errors));
  } else if ((m = /^\{\s*\[key: string\]:\s*([\s\S]+?);?\s*\}$/.exec(type))) {
    if (isPlain(value)) for (const [k, v] of Object.entries(value)) strictType(v, m[1], path, `${where}.${k}`, errors);
  } else if (/^I\w+$/.test(type)) {
    const here = parse(path);
    if (here.ifaces.has(type)) return strictIface(value, path, type, where, errors);
    const imp = here.imports.get(type);
    if (imp) {
      const target = dtsPath(imp.spec, imp.dir);
      strictIface(value, target, null, where, errors);
    }
  }
  // Anything else is a leaf (string, number, a union of literals, IntOrString, Quantity, ...).
}

function strictIface(value, path, name, where, errors) {
  const file = parse(path);
  const fields = file.ifaces.get(name ?? file.main);
  if (!fields || !isPlain(value)) return; // a type alias (IntOrString, Quantity, ...) or a type error
  for (const [k, v] of Object.entries(value)) {
    const at = where ? `${where}.${k}` : k;
    if (!fields.has(k)) errors.push(`unknown field "${at}"`);
    else strictType(v, fields.get(k), path, at, errors);
  }
}

let bad = 0;
for (const { file, index, object } of items) {
  const out = { file, index, kind: object?.kind ?? null, name: object?.metadata?.name ?? null, ok: true, error: null };
  try {
    const Cls = modelClass(object?.apiVersion, object?.kind);
    const model = new Cls(object);
    // The constructor fills apiVersion and kind; a manifest's own must match what it was read as.
    if (model.apiVersion !== object.apiVersion || model.kind !== object.kind) {
      throw new Error(`apiVersion/kind ${object.apiVersion}/${object.kind} read as ${model.apiVersion}/${model.kind}`);
    }
    model.validate();
    const errors = [];
    strictIface(object, dtsPath(`kubernetes-models/${object.apiVersion}/${object.kind}`, "."), null, "", errors);
    if (errors.length) throw new Error(`strict decoding error: ${errors.join(", ")}`);
  } catch (e) {
    out.ok = false;
    out.error = String(e?.message ?? e);
    bad++;
  }
  console.log(JSON.stringify(out));
}
process.exit(bad ? 1 : 0);
