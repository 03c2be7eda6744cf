// A ConnectionFlood in a process of its own (an attacker is another host, not the test's event loop):
// argv[2] is its FloodOptions as JSON; it prints its counts as one JSON line every 250 ms and stops
// when its stdin closes.
import { ConnectionFlood, type FloodOptions } from './connection-flood.js';

const flood = new ConnectionFlood(JSON.parse(process.argv[2]!) as FloodOptions);
const report = (): void => {
  const { opened, closed, mostOpen, open } = flood;
  process.stdout.write(`${JSON.stringify({ opened, closed, mostOpen, open })}\n`);
};
const timer = setInterval(report, 250);
flood.start();
process.stdin.resume();
process.stdin.on('end', () => {
  clearInterval(timer);
  flood.stop();
  report();
  process.exit(0);
});
