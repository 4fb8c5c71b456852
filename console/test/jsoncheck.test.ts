// checkJson (console/src/jsoncheck.ts) accepts exactly what JSON.parse
// accepts, and places a problem at its line and column.
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkJson } from "../src/jsoncheck.js";

test("checkJson places each problem at its line and column", () => {
  const cases: [string, number, number, RegExp][] = [
    ['{"sku": "W-1",\n "quantity": }', 2, 14, /expected a value/],
    ["{sku: 1}", 1, 2, /property name in double quotes/],
    ['{"a": 1 "b": 2}', 1, 9, /expected ',' or '}'/],
    ["[1, 2", 1, 6, /expected ',' or ']'/],
    ['{"a": "x\ny"}', 1, 9, /control character/],
    ["01", 1, 2, /unexpected text after the value/],
    ["", 1, 1, /unexpected end/],
    ["{} {}", 1, 4, /unexpected text/],
    ['"\\x"', 1, 3, /invalid escape/],
  ];
  for (const [text, line, column, message] of cases) {
    const p = checkJson(text);
    assert.ok(p, `${JSON.stringify(text)} is not JSON`);
    assert.equal(p.line, line, JSON.stringify(text));
    assert.equal(p.column, column, JSON.stringify(text));
    assert.match(p.message, message);
  }
  for (const ok of ['{"a": [1, -2.5e3, true, false, null, "\\u00e9\\n"]}', " 0 ", "[]", '""']) assert.equal(checkJson(ok), undefined, ok);
});

test("checkJson agrees with JSON.parse on random texts", () => {
  // A seeded generator over JSON's alphabet and a few near-misses, so that
  // about half the texts are JSON.
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const atoms = ["{", "}", "[", "]", ",", ":", '"a"', '"b\\n"', "1", "-0.5", "2e3", "true", "null", " ", "\n", "x", '"', "01", "\\", "\t"];
  const gen = (depth: number): string => {
    const r = rand(10);
    if (depth > 3 || r < 3) return ["1", '"s"', "true", "null", "-2.5E+1"][rand(5)];
    if (r < 5) return `[${Array.from({ length: rand(3) }, () => gen(depth + 1)).join(",")}]`;
    if (r < 7) return `{${Array.from({ length: rand(3) }, (_, k) => `"k${k}":${gen(depth + 1)}`).join(",")}}`;
    return Array.from({ length: 1 + rand(6) }, () => atoms[rand(atoms.length)]).join("");
  };
  let valid = 0;
  for (let n = 0; n < 20000; n++) {
    let text = gen(0);
    if (rand(4) === 0) {
      const at = rand(text.length + 1);
      text = text.slice(0, at) + atoms[rand(atoms.length)] + text.slice(at);
    }
    let parses = true;
    try {
      JSON.parse(text);
    } catch {
      parses = false;
    }
    if (parses) valid++;
    assert.equal(checkJson(text) === undefined, parses, JSON.stringify(text));
  }
  assert.ok(valid > 1000 && valid < 19000, `a mix of valid and invalid texts (${valid} valid)`);
});
