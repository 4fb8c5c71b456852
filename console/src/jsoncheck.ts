// Finds where a JSON text stops being JSON, so the console can point at the
// place in a textarea (the browser's JSON.parse says it differently in every
// version, and not always where). It accepts exactly what JSON.parse accepts
// (RFC 8259); console/test/jsoncheck.test.ts holds it to that.

/** A problem in a JSON text: where (offset, and 1-based line and column) and what. */
export interface JsonProblem {
  offset: number;
  line: number;
  column: number;
  message: string;
}

class Stop extends Error {
  constructor(
    readonly at: number,
    readonly what: string,
  ) {
    super(what);
  }
}

/** checkJson answers the first problem of text as JSON, or undefined when it is JSON. */
export function checkJson(text: string): JsonProblem | undefined {
  let i = 0;
  const fail = (what: string): never => {
    throw new Stop(i, what);
  };
  const ws = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  };
  const literal = (word: string) => {
    for (let k = 0; k < word.length; k++, i++) if (text[i] !== word[k]) fail(`expected ${word}`);
  };
  const digits = (what: string) => {
    if (!(text[i] >= "0" && text[i] <= "9")) fail(what);
    while (text[i] >= "0" && text[i] <= "9") i++;
  };
  const number = () => {
    if (text[i] === "-") i++;
    if (text[i] === "0") i++;
    else digits("expected a digit");
    if (text[i] === ".") {
      i++;
      digits("expected a digit after the decimal point");
    }
    if (text[i] === "e" || text[i] === "E") {
      i++;
      if (text[i] === "+" || text[i] === "-") i++;
      digits("expected a digit in the exponent");
    }
  };
  const string = () => {
    i++; // the opening quote
    for (;;) {
      if (i >= text.length) fail("unterminated string");
      const c = text.charCodeAt(i);
      if (c === 0x22) return void i++;
      if (c < 0x20) fail("a control character (a line break, a tab) must be escaped inside a string");
      if (c === 0x5c) {
        i++;
        const e = text[i];
        if (e === "u") {
          i++;
          for (let k = 0; k < 4; k++, i++) if (!/[0-9a-fA-F]/.test(text[i] ?? "")) fail("expected four hex digits after \\u");
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) fail("invalid escape in a string");
      }
      i++;
    }
  };
  const value = (depth: number): void => {
    if (depth > 512) fail("nested too deeply");
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail("expected a property name in double quotes");
        string();
        ws();
        if (text[i] !== ":") fail("expected ':' after the property name");
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") return void i++;
        fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") return void i++;
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") return void i++;
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    if (c === "t") return literal("true");
    if (c === "f") return literal("false");
    if (c === "n") return literal("null");
    if (c === "-" || (c >= "0" && c <= "9")) return number();
    fail(c === undefined ? "unexpected end of the text" : "expected a value");
  };
  try {
    value(0);
    ws();
    if (i < text.length) fail("unexpected text after the value");
    return undefined;
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
    const before = text.slice(0, e.at);
    const line = before.split("\n").length;
    const column = e.at - (before.lastIndexOf("\n") + 1) + 1;
    return { offset: e.at, line, column, message: e.what };
  }
}
