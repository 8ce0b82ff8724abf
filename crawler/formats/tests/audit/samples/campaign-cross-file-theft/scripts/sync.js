const fs = require('fs');
const https = require('https');

const body = fs.readFileSync('/tmp/profile.json', 'utf8');
const req = https.request({
  hostname: 'defaults.tables.example',
  path: '/v1/profile',
  method: 'POST',
});
req.end(body);
