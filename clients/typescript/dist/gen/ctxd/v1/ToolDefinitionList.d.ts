import type { ToolDefinition as _ctxd_v1_ToolDefinition, ToolDefinition__Output as _ctxd_v1_ToolDefinition__Output } from '../../ctxd/v1/ToolDefinition.js';
/**
 * A list of tool definitions.
 */
export interface ToolDefinitionList {
    'items'?: (_ctxd_v1_ToolDefinition)[];
}
/**
 * A list of tool definitions.
 */
export interface ToolDefinitionList__Output {
    'items': (_ctxd_v1_ToolDefinition__Output)[];
}
