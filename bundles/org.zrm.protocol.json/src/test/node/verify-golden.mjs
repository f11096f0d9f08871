#!/usr/bin/env node
// Verifies ZRM's golden JSON corpus against the real zero-cache package (@rocicorp/zero).
//
//   node verify-golden.mjs <path to node_modules/@rocicorp/zero>
//   (or ZERO_PKG=<path> node verify-golden.mjs)
//
// For every file under ../resources/golden/{change-source,subscriber}/ it
//   1. parses the text with the package's own BigIntJSON.parse (JSON.parse for the ack frame,
//      which upstream parses that way),
//   2. validates the parsed value with the package's own valita schema in "passthrough" mode
//      (the mode zero-cache uses for everything it reads off a WebSocket),
//   3. checks the message type against the file name (<type>[--variant].json),
//   4. re-stringifies the *parsed value* with the package's BigIntJSON.stringify and compares
//      the bytes with the file (OK / DIFF),
//   5. reports (as NOTE, not a failure) when stringifying the *schema output* differs, i.e. where
//      valita reorders members or inserts defaults,
//   6. for begin/commit bodies carrying a pgoutput commitLsn, checks that the watermark equals
//      lexi(commitLsn), as the Postgres change source derives it.
// It then compares JavaScript's String(x) with the expectations in JsNumbersTest.java and the
// package's LSN / LexiVersion / StateVersion functions with WatermarkExamplesTest.java.
//
// Exit status: 0 if everything matches, 1 otherwise (DIFF, schema failure, unmapped file, type
// mismatch, number or watermark mismatch).

import {readFileSync, readdirSync, existsSync} from 'node:fs';
import {dirname, join, resolve} from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const bundleDir = resolve(here, '..', '..', '..'); // bundles/org.zrm.api
const goldenDir = join(bundleDir, 'src', 'test', 'resources', 'golden');
const javaTestDir = join(bundleDir, 'src', 'test', 'java', 'org', 'zrm');

const pkg = resolve(process.argv[2] ?? process.env.ZERO_PKG ?? 'node_modules/@rocicorp/zero');
if (!existsSync(join(pkg, 'out', 'zero-cache'))) {
  console.error(`@rocicorp/zero not found at ${pkg}; pass its directory as the first argument`);
  process.exit(2);
}
const mod = p => import(pathToFileURL(join(pkg, 'out', p)).href);

const pkgJson = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
const {BigIntJSON} = await mod('shared/src/bigint-json.js');
const valita = await mod('shared/src/valita.js');
const v = valita.valita_exports;
const cs = 'zero-cache/src/services/change-source/protocol/current/';
const {changeStreamMessageSchema} = await mod(cs + 'downstream.js');
const {changeSourceUpstreamSchema, backfillRequestSchema} = await mod(cs + 'upstream.js');
const {downstreamSchema} = await mod('zero-cache/src/services/change-streamer/change-streamer.js');
const {snapshotMessageSchema} = await mod('zero-cache/src/services/change-streamer/snapshot.js');
const lsn = await mod('zero-cache/src/services/change-source/pg/lsn.js');
const lexi = await mod('zero-cache/src/types/lexi-version.js');
const stateVersion = await mod('zero-cache/src/types/state-version.js');

// Not exported upstream (zero-cache/src/types/streams.ts); rebuilt verbatim with the package's valita.
const ackSchema = v.object({ack: v.number()}); // streamOutInternal: parse(JSON.parse(data), ackSchema)
const framedDownstreamSchema = v.object({msg: downstreamSchema, id: v.number()}); // streamIn

const bigJson = {parse: s => BigIntJSON.parse(s), stringify: x => BigIntJSON.stringify(x)};
// The ack frame is read with JSON.parse and written with JSON.stringify (streams.ts).
const plainJson = {parse: s => JSON.parse(s), stringify: x => JSON.stringify(x)};
// Frames are written by concatenation: `{"id":${id},"msg":${stringify(msg)}}` (streams.ts).
const frameJson = {
  parse: s => BigIntJSON.parse(s),
  stringify: f => `{"id":${f.id},"msg":${BigIntJSON.stringify(f.msg)}}`,
};

const changeSourceTypeOf = m => {
  if (m[0] === 'data' || m[0] === 'control') return `${m[0]}-${m[1]?.tag}`;
  return m[0];
};
const downstreamTypeOf = m => {
  if (m[0] === 'data') return `data-${m[1]?.tag}`;
  if (m[0] === 'error') return `error-${m[1]?.type}`;
  return m[0];
};

/** Maps a golden file to how upstream reads and writes it. */
function mapping(folder, type) {
  if (folder === 'change-source') {
    if (type === 'backfill-request') {
      return {schema: backfillRequestSchema, name: 'upstream.ts backfillRequestSchema', json: bigJson, typeOf: () => type};
    }
    if (type.startsWith('upstream-')) {
      return {
        schema: changeSourceUpstreamSchema, name: 'upstream.ts changeSourceUpstreamSchema', json: bigJson,
        typeOf: m => (m[1]?.tag === 'commit' ? 'upstream-commit' : 'upstream-status'),
      };
    }
    return {schema: changeStreamMessageSchema, name: 'downstream.ts changeStreamMessageSchema', json: bigJson, typeOf: changeSourceTypeOf};
  }
  if (folder === 'subscriber') {
    if (type === 'ack') return {schema: ackSchema, name: 'streams.ts ackSchema', json: plainJson, typeOf: () => type};
    if (type === 'frame') return {schema: framedDownstreamSchema, name: 'streams.ts {msg: downstreamSchema, id}', json: frameJson, typeOf: () => type};
    if (type === 'snapshot-status') {
      return {schema: snapshotMessageSchema, name: 'snapshot.ts snapshotMessageSchema', json: bigJson, typeOf: m => (m[0] === 'status' ? type : m[0])};
    }
    return {schema: downstreamSchema, name: 'change-streamer.ts downstreamSchema', json: bigJson, typeOf: downstreamTypeOf};
  }
  return null;
}

function shortDiff(expected, actual) {
  let i = 0;
  while (i < expected.length && i < actual.length && expected[i] === actual[i]) i++;
  const from = Math.max(0, i - 25);
  const show = s => JSON.stringify(s.slice(from, i + 35));
  return `at char ${i}: file ${show(expected)} vs node ${show(actual)}`;
}

let failures = 0;
let ok = 0;
const notes = [];
const fail = line => {
  failures++;
  console.log(line);
};

console.log(`# golden corpus vs ${pkgJson.name}@${pkgJson.version} on Node ${process.version}`);
for (const entry of readdirSync(goldenDir, {withFileTypes: true}).sort((a, b) => a.name.localeCompare(b.name))) {
  const folder = entry.name;
  if (!entry.isDirectory()) {
    fail(`UNMAPPED ${folder} (not in a golden folder)`);
    continue;
  }
  for (const file of readdirSync(join(goldenDir, folder)).filter(f => f.endsWith('.json')).sort()) {
    const rel = `${folder}/${file}`;
    const base = file.slice(0, -'.json'.length);
    const type = base.includes('--') ? base.slice(0, base.indexOf('--')) : base;
    const m = mapping(folder, type);
    if (!m) {
      fail(`UNMAPPED ${rel}`);
      continue;
    }
    const text = readFileSync(join(goldenDir, folder, file), 'utf8');
    let parsed, forSchema, out;
    try {
      parsed = m.json.parse(text);
      forSchema = m.json.parse(text); // a separate copy, so valita cannot affect `parsed`
    } catch (e) {
      fail(`PARSE-ERROR ${rel}: ${e.message}`);
      continue;
    }
    try {
      out = valita.parse(forSchema, m.schema, 'passthrough');
    } catch (e) {
      fail(`SCHEMA-FAIL ${rel} (${m.name}): ${String(e.message).split('\n')[0]}`);
      continue;
    }
    const actualType = m.typeOf(parsed);
    if (actualType !== type) {
      fail(`TYPE ${rel}: file name says ${type}, message is ${actualType}`);
      continue;
    }
    const again = m.json.stringify(parsed);
    if (again !== text) {
      fail(`DIFF ${rel} ${shortDiff(text, again)}`);
      continue;
    }
    const fromSchema = m.json.stringify(out);
    if (fromSchema !== text) {
      notes.push(`NOTE ${rel}: ${m.name} output re-stringifies differently, ${shortDiff(text, fromSchema)}`);
    }
    // Postgres source: watermark = lexi(commit LSN) for begin / commit / the commit echoed upstream.
    const body = Array.isArray(parsed) ? parsed[1] : undefined;
    const wm = Array.isArray(parsed) ? (parsed[2]?.commitWatermark ?? parsed[2]?.watermark) : undefined;
    if (body && typeof body.commitLsn === 'string' && wm !== undefined) {
      const expected = lsn.toStateVersionString(body.commitLsn);
      if (expected !== wm) {
        fail(`WATERMARK ${rel}: commitLsn ${body.commitLsn} is watermark ${expected}, file says ${wm}`);
        continue;
      }
    }
    ok++;
    console.log(`OK ${rel} (${m.name})`);
  }
}
for (const n of notes) console.log(n);
console.log(`# golden: ${ok} OK, ${failures} failed, ${notes.length} notes`);

// ---- JavaScript number formatting vs JsNumbersTest.java -----------------------------------------
const jsNumbersTest = readFileSync(join(javaTestDir, 'protocol/json/internal/JsNumbersTest.java'), 'utf8');
const formatsAt = jsNumbersTest.indexOf('void formatsLikeJavaScript');
const formatBlock = jsNumbersTest.slice(jsNumbersTest.lastIndexOf('@CsvSource', formatsAt), formatsAt);
const numberCases = [...formatBlock.matchAll(/^\s*"([^"|]+)\|([^"|]+)",/gm)].map(x => [x[1], x[2]]);
const extra = ['123456789012345678901234', '1e21', '1.5e-7', '0.000001', '2.82879384806159e17', '1718812345003.5',
  '5e-324', '1.7976931348623157e308'];
let numberFailures = 0;
console.log(`# JsNumbersTest.formatsLikeJavaScript: ${numberCases.length} cases`);
for (const [input, expected] of numberCases) {
  const x = Number(input.replace(/[dDfF]$/, ''));
  const s = String(x);
  const json = BigIntJSON.stringify(x);
  const good = s === expected && json === expected;
  if (!good) numberFailures++;
  console.log(`${good ? 'OK' : 'DIFF'} String(${input}) = ${s}${good ? '' : ` (Java test expects ${expected}, BigIntJSON ${json})`}`);
}
for (const input of extra) console.log(`   String(${input}) = ${String(Number(input))}`);
const nonFinite = BigIntJSON.stringify([NaN, Infinity, -Infinity, -0]);
if (nonFinite !== '[null,null,null,0]') numberFailures++;
console.log(`${nonFinite === '[null,null,null,0]' ? 'OK' : 'DIFF'} BigIntJSON.stringify([NaN,Infinity,-Infinity,-0]) = ${nonFinite}`);
if (numberCases.length < 10) {
  numberFailures++;
  console.log('DIFF could not read the CsvSource of JsNumbersTest.formatsLikeJavaScript');
}

// ---- LSN / LexiVersion / StateVersion vs WatermarkExamplesTest.java ---------------------------
const wmTest = readFileSync(join(javaTestDir, 'watermark/WatermarkExamplesTest.java'), 'utf8');
const csvAfter = (marker) => {
  const at = wmTest.indexOf(marker);
  const start = wmTest.lastIndexOf('@CsvSource', at);
  const block = wmTest.slice(start, at);
  return [...block.matchAll(/"([^"]*)"/g)].map(x => x[1].split(',').map(s => s.trim()));
};
let wmFailures = 0;
let wmCases = 0;
const check = (label, actual, expected) => {
  wmCases++;
  if (actual !== expected) {
    wmFailures++;
    console.log(`DIFF ${label}: node ${actual}, Java test expects ${expected}`);
  }
};
for (const [lsnText, watermark, value] of csvAfter('void lsnToAndFromWatermark')) {
  const major = watermark.split('.')[0];
  check(`toStateVersionString(${lsnText})`, lsn.toStateVersionString(lsnText), major);
  check(`toBigInt(${lsnText})`, String(lsn.toBigInt(lsnText)), value);
  check(`fromBigInt(${value})`, lsn.fromBigInt(BigInt(value)), lsnText);
  check(`fromStateVersionString(${watermark})`, lsn.fromStateVersionString(watermark), lsnText);
}
for (const [value, l] of csvAfter('void lexiEncoding')) {
  const n = BigInt(value);
  let enc;
  try {
    enc = lexi.versionToLexi(n);
  } catch (e) {
    enc = `throws (${e.message})`;
  }
  check(`versionToLexi(${value})`, enc, l);
  check(`versionFromLexi(${l})`, String(lexi.versionFromLexi(l)), value);
}
for (const [text, major, minor] of csvAfter('void stateVersionRoundTrip')) {
  const sv = stateVersion.stateVersionFromString(text);
  check(`stateVersionFromString(${text}).major`, String(sv.major), major);
  check(`stateVersionFromString(${text}).minor`, sv.minor === undefined ? '' : String(sv.minor), minor ?? '');
  check(`stateVersionToString(${text})`, stateVersion.stateVersionToString(sv), text);
}
console.log(`# WatermarkExamplesTest: ${wmCases - wmFailures}/${wmCases} checks agree with the package`);
if (wmCases < 20) {
  wmFailures++;
  console.log('DIFF could not read the CsvSources of WatermarkExamplesTest');
}

const total = failures + numberFailures + wmFailures;
console.log(total === 0 ? '# ALL OK' : `# FAILED: ${failures} golden, ${numberFailures} number, ${wmFailures} watermark`);
process.exit(total === 0 ? 0 : 1);
