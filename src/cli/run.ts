import { main } from './main.js';

// Exit at once: a finished command may leave timers or pools behind that would keep the
// process alive (serve returns only after its graceful stop).
process.exit(await main(process.argv.slice(2)));
