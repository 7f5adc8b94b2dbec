import type { SearchHit as _ctxd_v1_SearchHit, SearchHit__Output as _ctxd_v1_SearchHit__Output } from '../../ctxd/v1/SearchHit.js';
export interface SearchResponse {
    'hits'?: (_ctxd_v1_SearchHit)[];
}
export interface SearchResponse__Output {
    'hits': (_ctxd_v1_SearchHit__Output)[];
}
