'use strict';
// The local code interpreter's JavaScript contexts: one node process per context, driven by the
// bridge (kernels.py). Part of the Sandboxes local runtime (the code-interpreter-v1 template).
//
// Reads one JSON request per line on the file descriptor argv[2]: {token, code, env, restore}.
// Runs the code in this process's global context, so what one run declares the next one sees;
// answers on argv[3] with one line: the token, a space, and {result} or {error} as JSON, after writing the mark
// (0x1e token 0x1e) to stdout and stderr. A result is the MIME bundle ijavascript's kernel gives:
// text/plain is util.inspect of the value (undefined too), a promise is awaited first. An error
// is {name, value, traceback}. Top-level await and import declarations are rewritten first
// (Debian's acorn parses) into a script node runs: declarations become globals, imports require().
// SIGINT interrupts: a synchronous run is broken off (vm's breakOnSigint), an awaited one rejected.

const fs = require('fs');
const path = require('path');
const util = require('util');
const vm = require('vm');
const { createRequire } = require('module');
const readline = require('readline');

let acorn = null;
try {
  acorn = require('acorn');
} catch (e) {
  // without acorn, code runs as written: top-level await and import are syntax errors
}

const commandsFd = Number(process.argv[2]);
const controlFd = Number(process.argv[3]);
// a TypeScript context: each run is transpiled (Debian's typescript, types dropped, no checking) before it runs as JavaScript
const ts = process.argv[4] === 'typescript' ? require('typescript') : null;
const userRequire = createRequire(path.join(process.cwd(), '[sandboxes]'));
Object.defineProperty(globalThis, 'require', { value: userRequire, writable: true, configurable: true, enumerable: false });

class InterruptedError extends Error {
  constructor() {
    super('the execution was interrupted');
    this.name = 'InterruptedError';
  }
}

let interrupt = null;
process.on('SIGINT', () => {
  if (interrupt) {
    interrupt(new InterruptedError());
  }
});

function applyEnv(env) {
  for (const [k, v] of Object.entries(env || {})) {
    if (v === null) {
      delete process.env[k];
    } else {
      process.env[k] = v;
    }
  }
}

function formatError(error) {
  return {
    name: error && error.name ? String(error.name) : typeof error,
    value: error && error.message !== undefined ? String(error.message) : util.inspect(error),
    traceback: error && error.stack ? ownFrames(String(error.stack)) : '',
  };
}

/** A stack without the frames of this kernel (and node's vm under it): the user's code's own. */
function ownFrames(stack) {
  const lines = stack.split('\n');
  const cut = lines.findIndex((l) => /^\s+at /.test(l) && (l.includes(__filename) || l.includes('node:vm:') || l.includes('sigintHandlersWrap')));
  return (cut < 0 ? lines : lines.slice(0, cut)).join('\n');
}

function toMime(value) {
  let mime = {};
  if (value !== undefined && value !== null && typeof value._toMime === 'function') {
    try {
      const m = value._toMime();
      if (m && typeof m === 'object') {
        mime = m;
      }
    } catch (e) {
      // a broken _toMime: the plain text still goes
    }
  }
  if (!('text/plain' in mime)) {
    mime['text/plain'] = util.inspect(value);
  }
  for (const [method, type] of [['_toHtml', 'text/html'], ['_toSvg', 'image/svg+xml'], ['_toPng', 'image/png'], ['_toJpeg', 'image/jpeg']]) {
    if (value !== undefined && value !== null && typeof value[method] === 'function' && !(type in mime)) {
      try {
        mime[type] = value[method]();
      } catch (e) {
        // left out
      }
    }
  }
  return mime;
}

// --- rewriting top-level await and import into a script ---

function parse(code, options) {
  try {
    return acorn.parse(code, Object.assign({ ecmaVersion: 'latest', allowHashBang: true }, options));
  } catch (e) {
    return null;
  }
}

function patternNames(node, names) {
  if (!node) {
    return names;
  }
  switch (node.type) {
    case 'Identifier': names.push(node.name); break;
    case 'ObjectPattern': node.properties.forEach((p) => patternNames(p.type === 'RestElement' ? p.argument : p.value, names)); break;
    case 'ArrayPattern': node.elements.forEach((e) => patternNames(e, names)); break;
    case 'AssignmentPattern': patternNames(node.left, names); break;
    case 'RestElement': patternNames(node.argument, names); break;
    default: break;
  }
  return names;
}

function replaceAll(code, edits) {
  let out = '';
  let at = 0;
  for (const e of edits.sort((a, b) => a.start - b.start)) {
    out += code.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + code.slice(at);
}

function rewriteImports(code, ast) {
  const edits = [];
  for (const node of ast.body) {
    if (node.type !== 'ImportDeclaration') {
      continue;
    }
    const source = code.slice(node.source.start, node.source.end);
    const parts = [];
    for (const s of node.specifiers) {
      if (s.type === 'ImportNamespaceSpecifier') {
        parts.push(`var ${s.local.name} = require(${source});`);
      } else if (s.type === 'ImportDefaultSpecifier') {
        parts.push(`var ${s.local.name} = ((m) => m && m.__esModule ? m.default : m)(require(${source}));`);
      } else {
        const imported = s.imported.type === 'Identifier' ? s.imported.name : JSON.stringify(s.imported.value);
        parts.push(`var { ${imported}: ${s.local.name} } = require(${source});`);
      }
    }
    edits.push({ start: node.start, end: node.end, text: parts.length ? parts.join(' ') : `require(${source});` });
  }
  return replaceAll(code, edits);
}

function wrapAsync(code, ast) {
  const names = [];
  const hoisted = [];
  const edits = [];
  const body = ast.body;
  body.forEach((node, i) => {
    const src = code.slice(node.start, node.end);
    if (node.type === 'VariableDeclaration') {
      const assigns = [];
      for (const d of node.declarations) {
        patternNames(d.id, names);
        if (d.init) {
          assigns.push(`(${code.slice(d.id.start, d.id.end)} = ${code.slice(d.init.start, d.init.end)})`);
        } else if (node.kind !== 'var') {
          assigns.push(`(${code.slice(d.id.start, d.id.end)} = undefined)`);
        }
      }
      edits.push({ start: node.start, end: node.end, text: assigns.length ? `void (${assigns.join(', ')});` : ';' });
    } else if (node.type === 'FunctionDeclaration') {
      names.push(node.id.name);
      hoisted.push(`${node.id.name} = ${src};`);
      edits.push({ start: node.start, end: node.end, text: ';' });
    } else if (node.type === 'ClassDeclaration') {
      names.push(node.id.name);
      edits.push({ start: node.start, end: node.end, text: `${node.id.name} = ${src};` });
    } else if (i === body.length - 1 && node.type === 'ExpressionStatement') {
      edits.push({ start: node.start, end: node.end, text: `return (${code.slice(node.expression.start, node.expression.end)});` });
    }
  });
  const declared = names.length ? `var ${[...new Set(names)].join(', ')};\n` : '';
  return `${declared}(async () => {\n${hoisted.join('\n')}\n${replaceAll(code, edits)}\n})()`;
}

/** The script node runs for code: the code itself unless it needs top-level await or has imports. */
function transform(code) {
  if (!acorn || parse(code, { sourceType: 'script' })) {
    return code;
  }
  let script = code;
  const asModule = parse(code, { sourceType: 'module', allowAwaitOutsideFunction: true });
  if (asModule && asModule.body.some((n) => n.type === 'ImportDeclaration')) {
    script = rewriteImports(code, asModule);
    if (parse(script, { sourceType: 'script' })) {
      return script;
    }
  }
  const awaiting = parse(script, { sourceType: 'script', allowAwaitOutsideFunction: true });
  return awaiting ? wrapAsync(script, awaiting) : code; // a syntax error: node reports it as written
}

/** TypeScript to the JavaScript this kernel runs: syntax errors are thrown as SyntaxError, types are not checked. */
function transpile(code) {
  const out = ts.transpileModule(code, {
    reportDiagnostics: true,
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, isolatedModules: true },
  });
  const errors = (out.diagnostics || []).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length) {
    throw new SyntaxError(errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n'));
  }
  // a module's marker, which a script cannot hold: imports are rewritten to require() below
  return out.outputText.replace(/^export \{\};\s*$/m, '');
}

// --- the request loop ---

async function evaluate(code) {
  const interrupted = new Promise((resolve, reject) => {
    interrupt = reject;
  });
  interrupted.catch(() => {});
  let value = vm.runInThisContext(transform(ts ? transpile(code) : code), { filename: 'evalmachine.<anonymous>', breakOnSigint: true });
  if (value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function') {
    value = await Promise.race([value, interrupted]);
  }
  return value;
}

async function run(request) {
  let reply;
  applyEnv(request.env);
  try {
    const value = await evaluate(request.code);
    reply = { result: request.code.trim() === '' ? null : toMime(value) };
  } catch (error) {
    reply = { error: formatError(error) };
  } finally {
    interrupt = null;
    applyEnv(request.restore);
  }
  const mark = `\x1e${request.token}\x1e`;
  fs.writeSync(1, mark);
  fs.writeSync(2, mark);
  fs.writeSync(controlFd, `${request.token} ${JSON.stringify(reply)}\n`);
}

const requests = [];
let running = false;

async function pump() {
  if (running) {
    return;
  }
  running = true;
  while (requests.length) {
    await run(requests.shift());
  }
  running = false;
}

const lines = readline.createInterface({ input: fs.createReadStream(null, { fd: commandsFd }), crlfDelay: Infinity });
lines.on('line', (line) => {
  requests.push(JSON.parse(line));
  pump();
});
lines.on('close', () => process.exit(0));
