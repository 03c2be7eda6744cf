// The last line of defence: a rejection nobody handled or an exception nobody caught is a bug in
// bootlet, and it is logged and counted as one. The process keeps running, because a node agent
// that exits takes etcd and the API server with it.
import type { Logger } from '../log/logger.js';

let count = 0;

/** How many unhandled rejections and uncaught exceptions there have been (the metric's value). */
export function unexpectedErrorCount(): number {
  return count;
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`;
  return String(err);
}

/** Installs the process-wide handlers; returns a function that removes them (tests). */
export function guardProcess(logger: Logger): () => void {
  const onRejection = (reason: unknown): void => {
    count++;
    logger.error('BUG: unhandled promise rejection; bootlet keeps running', { err: describe(reason) });
  };
  const onException = (err: unknown): void => {
    count++;
    logger.error('BUG: uncaught exception; bootlet keeps running', { err: describe(err) });
  };
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}
