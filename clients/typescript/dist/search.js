import { toPbMessage } from './types.js';
const SCOPES = {
    messages: 'SEARCH_SCOPE_MESSAGES',
    summaries: 'SEARCH_SCOPE_SUMMARIES',
    both: 'SEARCH_SCOPE_BOTH',
};
export const timestamp = (date) => ({
    seconds: Math.floor(date.getTime() / 1000),
    nanos: (((date.getTime() % 1000) + 1000) % 1000) * 1e6,
});
export function searchRequest(sessionId, query, options) {
    const scope = SCOPES[options.scope ?? 'both'];
    if (scope === undefined)
        throw new TypeError('scope must be messages, summaries or both');
    return {
        sessionId,
        query,
        scope,
        roles: (options.roles ?? []).map((role) => toPbMessage({ role }).role ?? 'ROLE_UNSPECIFIED'),
        since: options.since ? timestamp(options.since) : null,
        until: options.until ? timestamp(options.until) : null,
        limit: options.limit ?? 0,
    };
}
