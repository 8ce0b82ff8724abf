#!/usr/bin/env node
const [, , cmd, name] = process.argv;
if (cmd !== 'new' || !name) { console.error('usage: rck new <Name>'); process.exit(1); }
console.log(`created ${name}.tsx`);
