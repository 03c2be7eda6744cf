// V8 settings for the agent. The executable carries them itself (SEA `execArgv`, build/build.mjs),
// so they apply before V8 makes its heap: `--max-opt=1` (baseline compiler only) and
// `--max-semi-space-size=1` (the young generation keeps its initial size). main.ts imports this
// first, for a run without them (from source, or an executable built on a Node without SEA
// `execArgv`): there they are set as early as the code can, which is after the heap is made, so
// the growth factor stands in for the semi-space cap.
import { setFlagsFromString } from 'node:v8';

if (!process.execArgv.some((a) => a.startsWith('--max-opt='))) {
  setFlagsFromString('--max-opt=1');
  setFlagsFromString('--semi-space-growth-factor=1');
}
