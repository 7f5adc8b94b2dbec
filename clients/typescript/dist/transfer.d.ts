import type { ImportSessionResponse__Output } from './gen/ctxd/v1/ImportSessionResponse.js';
import type { Transport } from './transport.js';
/** The session's file, whole. Retried on UNAVAILABLE (a read). */
export declare function exportSession(transport: Transport, sessionId: string): Promise<Buffer>;
/**
 * Creates a session from a file ExportSession wrote, as `sessionId` (default: the
 * file's id). Not retried: a retry after a lost answer would find the id taken
 * (AlreadyExistsError) — GetSession says whether the first attempt made it.
 */
export declare function importSession(transport: Transport, file: Uint8Array, sessionId?: string): Promise<ImportSessionResponse__Output>;
