const hello = String.fromCharCode(72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100);
const flags = 0x0f ^ 0x03;
const units = ['km', 'mi', 'kg', 'lb', 'C', 'F'];
const schemes = ['http://', 'https://', 'ftp://', 'ws://'];
console.log(hello, flags, units.join(', '), schemes.join(' '));
