import type { ToolDefinitionList as _ctxd_v1_ToolDefinitionList, ToolDefinitionList__Output as _ctxd_v1_ToolDefinitionList__Output } from '../../ctxd/v1/ToolDefinitionList.js';
import type { Long } from '@grpc/proto-loader';
/**
 * Tools for a request: either the definitions (counted by ctxd and copied into
 * the JSON output formats) or only their token count.
 */
export interface Tools {
    /**
     * The definitions.
     */
    'definitions'?: (_ctxd_v1_ToolDefinitionList | null);
    /**
     * Only what they cost in tokens, when the client renders them itself (0 to
     * 100 000 000).
     */
    'tokenCount'?: (number | string | Long);
    'tools'?: "definitions" | "tokenCount";
}
/**
 * Tools for a request: either the definitions (counted by ctxd and copied into
 * the JSON output formats) or only their token count.
 */
export interface Tools__Output {
    /**
     * The definitions.
     */
    'definitions'?: (_ctxd_v1_ToolDefinitionList__Output | null);
    /**
     * Only what they cost in tokens, when the client renders them itself (0 to
     * 100 000 000).
     */
    'tokenCount'?: (number);
    'tools'?: "definitions" | "tokenCount";
}
