import { timestamp } from './search.js';
const at = (date) => (date ? timestamp(date) : null);
export function listRequest(options) {
    return {
        pageSize: options.pageSize ?? 0,
        pageToken: options.pageToken ?? '',
        metadata: options.metadata ?? {},
        parentSessionId: options.parentSessionId ?? '',
        forkedFromSessionId: options.forkedFromSessionId ?? '',
        ...(options.finished === undefined ? {} : { finished: options.finished }),
        createdAfter: at(options.createdAfter),
        createdBefore: at(options.createdBefore),
        updatedAfter: at(options.updatedAfter),
        updatedBefore: at(options.updatedBefore),
    };
}
