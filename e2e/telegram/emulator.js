// Starts the telegram-test-api Bot API emulator on 127.0.0.1:PORT for the
// end-to-end test (e2e_test.go), prints "READY" once it listens, and stops
// on SIGTERM or when stdin closes (the test went away).
'use strict';
const TelegramServer = require('telegram-test-api');

const port = Number(process.argv[2]);
if (!port) {
  console.error('usage: node emulator.js PORT');
  process.exit(2);
}
const server = new TelegramServer({ port, host: '127.0.0.1', storeTimeout: 600 });
server.start().then(() => console.log('READY'), (err) => {
  console.error(err);
  process.exit(1);
});
const stop = () => server.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();
