'use strict';
// Tiny formula parser: expr := term (('+'|'-') term)*, term := pow (('*'|'/') pow)*, pow := unary ('^' pow)?
const FUNCS = { min: Math.min, max: Math.max, round: Math.round, abs: Math.abs, sqrt: Math.sqrt };

function tokenize(src) {
  const re = /\s*(\d+(?:\.\d+)?|[A-Za-z_]\w*|[-+*/^(),])/y;
  const out = [];
  let m;
  re.lastIndex = 0;
  while (re.lastIndex < src.length && (m = re.exec(src))) out.push(m[1]);
  if (re.lastIndex < src.trimEnd().length) throw new SyntaxError(`unexpected input at ${re.lastIndex}`);
  return out;
}

function evaluate(src, scope = {}) {
  const t = tokenize(src);
  let i = 0;
  const peek = () => t[i];
  const next = () => t[i++];
  function primary() {
    const tok = next();
    if (tok === '(') { const v = expr(); if (next() !== ')') throw new SyntaxError('expected )'); return v; }
    if (/^\d/.test(tok)) return parseFloat(tok);
    if (tok in FUNCS && peek() === '(') {
      next(); const args = [expr()];
      while (peek() === ',') { next(); args.push(expr()); }
      if (next() !== ')') throw new SyntaxError('expected )');
      return FUNCS[tok](...args);
    }
    if (Object.prototype.hasOwnProperty.call(scope, tok)) return Number(scope[tok]);
    throw new ReferenceError(`unknown identifier: ${tok}`);
  }
  function unary() { if (peek() === '-') { next(); return -unary(); } return primary(); }
  function pow() { const b = unary(); if (peek() === '^') { next(); return b ** pow(); } return b; }
  function term() { let v = pow(); while (peek() === '*' || peek() === '/') v = next() === '*' ? v * pow() : v / pow(); return v; }
  function expr() { let v = term(); while (peek() === '+' || peek() === '-') v = next() === '+' ? v + term() : v - term(); return v; }
  const v = expr();
  if (i !== t.length) throw new SyntaxError(`unexpected token ${t[i]}`);
  return v;
}

module.exports = { evaluate };
