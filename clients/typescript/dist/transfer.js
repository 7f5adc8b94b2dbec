import { fromServiceError } from './errors.js';
import { withRetries } from './retry.js';
/** Bytes of the file per ImportSession message (under gRPC's 4 MiB default). */
const CHUNK_BYTES = 1 << 20;
/** The session's file, whole. Retried on UNAVAILABLE (a read). */
export function exportSession(transport, sessionId) {
    const once = () => new Promise((resolve, reject) => {
        const chunks = [];
        const call = transport.stub.ExportSession({ sessionId }, transport.metadata());
        call.on('data', (chunk) => chunks.push(Buffer.from(chunk.data)));
        call.on('error', (error) => reject(fromServiceError(error)));
        call.on('end', () => resolve(Buffer.concat(chunks)));
    });
    return withRetries(transport.retry, once);
}
/**
 * Creates a session from a file ExportSession wrote, as `sessionId` (default: the
 * file's id). Not retried: a retry after a lost answer would find the id taken
 * (AlreadyExistsError) — GetSession says whether the first attempt made it.
 */
export function importSession(transport, file, sessionId = '') {
    return new Promise((resolve, reject) => {
        const call = transport.stub.ImportSession(transport.metadata(), (error, response) => {
            if (error)
                reject(fromServiceError(error));
            else
                resolve(response);
        });
        for (let start = 0; start === 0 || start < file.length; start += CHUNK_BYTES) {
            const chunk = {
                sessionId: start === 0 ? sessionId : '',
                data: Buffer.from(file.subarray(start, start + CHUNK_BYTES)),
            };
            call.write(chunk);
        }
        call.end();
    });
}
