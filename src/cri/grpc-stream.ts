// Follows a gRPC server stream: each message to `onMessage`, and `onEnd` exactly once — with no
// error when the server closed the stream or we cancelled it, with one when the stream failed.
import * as grpc from '@grpc/grpc-js';

export interface StreamHandle {
  cancel(): void;
}

export function followServerStream<Msg, E>(
  call: grpc.ClientReadableStream<Msg>,
  onMessage: (m: Msg) => void,
  onEnd: (err?: E) => void,
  toError: (err: grpc.ServiceError) => E,
): StreamHandle {
  let ended = false;
  let cancelled = false;
  const finish = (err?: E): void => {
    if (ended) return;
    ended = true;
    onEnd(err);
  };
  call.on('data', (m: Msg) => {
    if (!ended) onMessage(m);
  });
  call.on('error', (err: grpc.ServiceError) => {
    // Our own cancel() surfaces as CANCELLED: that is a normal end, not a failure.
    if (cancelled && err.code === grpc.status.CANCELLED) finish();
    else finish(toError(err));
  });
  call.on('end', () => finish());
  return {
    cancel: () => {
      cancelled = true;
      call.cancel();
    },
  };
}
