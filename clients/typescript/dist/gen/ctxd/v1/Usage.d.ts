import type { Long } from '@grpc/proto-loader';
/**
 * Token usage reported by the provider for one model call. Each figure is between 0 and
 * 100 000 000; anything else is INVALID_ARGUMENT naming the field.
 */
export interface Usage {
    /**
     * Prompt tokens the provider counted for the request (OpenAI prompt_tokens, Anthropic
     * input_tokens + cache_creation_input_tokens + cache_read_input_tokens).
     */
    'inputTokens'?: (number | string | Long);
    /**
     * Completion tokens the provider counted for the reply.
     */
    'outputTokens'?: (number | string | Long);
    /**
     * Of input_tokens, how many were served from the provider's prompt cache.
     */
    'cachedInputTokens'?: (number | string | Long);
}
/**
 * Token usage reported by the provider for one model call. Each figure is between 0 and
 * 100 000 000; anything else is INVALID_ARGUMENT naming the field.
 */
export interface Usage__Output {
    /**
     * Prompt tokens the provider counted for the request (OpenAI prompt_tokens, Anthropic
     * input_tokens + cache_creation_input_tokens + cache_read_input_tokens).
     */
    'inputTokens': (number);
    /**
     * Completion tokens the provider counted for the reply.
     */
    'outputTokens': (number);
    /**
     * Of input_tokens, how many were served from the provider's prompt cache.
     */
    'cachedInputTokens': (number);
}
