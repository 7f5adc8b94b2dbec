// ExportSession and ImportSession: a session as a file (JSON lines, versioned, with a
// SHA-256; docs/api.md "Export and import"), read from one server and created on another.
import type * as grpc from '@grpc/grpc-js';

import { fromServiceError } from './errors.js';
import type { ExportSessionChunk__Output } from './gen/ctxd/v1/ExportSessionChunk.js';
import type { ImportSessionRequest } from './gen/ctxd/v1/ImportSessionRequest.js';
import type { ImportSessionResponse__Output } from './gen/ctxd/v1/ImportSessionResponse.js';
import { withRetries } from './retry.js';
import type { Transport } from './transport.js';

/** Bytes of the file per ImportSession message (under gRPC's 4 MiB default). */
const CHUNK_BYTES = 1 << 20;

/** The session's file, whole. Retried on UNAVAILABLE (a read). */
export function exportSession(transport: Transport, sessionId: string): Promise<Buffer> {
  const once = () =>
    new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const call = transport.stub.ExportSession({ sessionId }, transport.metadata());
      call.on('data', (chunk: ExportSessionChunk__Output) => chunks.push(Buffer.from(chunk.data)));
      call.on('error', (error: grpc.ServiceError) => reject(fromServiceError(error)));
      call.on('end', () => resolve(Buffer.concat(chunks)));
    });
  return withRetries(transport.retry, once);
}

/**
 * Creates a session from a file ExportSession wrote, as `sessionId` (default: the
 * file's id). Not retried: a retry after a lost answer would find the id taken
 * (AlreadyExistsError) — GetSession says whether the first attempt made it.
 */
export function importSession(
  transport: Transport,
  file: Uint8Array,
  sessionId = '',
): Promise<ImportSessionResponse__Output> {
  return new Promise((resolve, reject) => {
    const call = transport.stub.ImportSession(transport.metadata(), (error, response) => {
      if (error) reject(fromServiceError(error));
      else resolve(response as ImportSessionResponse__Output);
    });
    for (let start = 0; start === 0 || start < file.length; start += CHUNK_BYTES) {
      const chunk: ImportSessionRequest = {
        sessionId: start === 0 ? sessionId : '',
        data: Buffer.from(file.subarray(start, start + CHUNK_BYTES)),
      };
      call.write(chunk);
    }
    call.end();
  });
}
