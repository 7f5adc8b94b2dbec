/**
 * Which tokenizer counts a session's tokens.
 */
export declare const Tokenizer: {
    /**
     * Use the server default.
     */
    readonly TOKENIZER_UNSPECIFIED: 'TOKENIZER_UNSPECIFIED';
    /**
     * OpenAI o200k_base (GPT-4o and later), exact BPE embedded in the server.
     */
    readonly TOKENIZER_O200K_BASE: 'TOKENIZER_O200K_BASE';
    /**
     * OpenAI cl100k_base (GPT-4, GPT-3.5), exact BPE embedded in the server.
     */
    readonly TOKENIZER_CL100K_BASE: 'TOKENIZER_CL100K_BASE';
    /**
     * Characters (Unicode scalar values) divided by heuristic_chars_per_token.
     */
    readonly TOKENIZER_HEURISTIC: 'TOKENIZER_HEURISTIC';
    /**
     * DeepSeek-V3's byte-level BPE (deepseek-chat, deepseek-reasoner), exact BPE embedded
     * in the server.
     */
    readonly TOKENIZER_DEEPSEEK_V3: 'TOKENIZER_DEEPSEEK_V3';
};
/**
 * Which tokenizer counts a session's tokens.
 */
export type Tokenizer = 
/**
 * Use the server default.
 */
'TOKENIZER_UNSPECIFIED' | 0
/**
 * OpenAI o200k_base (GPT-4o and later), exact BPE embedded in the server.
 */
 | 'TOKENIZER_O200K_BASE' | 1
/**
 * OpenAI cl100k_base (GPT-4, GPT-3.5), exact BPE embedded in the server.
 */
 | 'TOKENIZER_CL100K_BASE' | 2
/**
 * Characters (Unicode scalar values) divided by heuristic_chars_per_token.
 */
 | 'TOKENIZER_HEURISTIC' | 3
/**
 * DeepSeek-V3's byte-level BPE (deepseek-chat, deepseek-reasoner), exact BPE embedded
 * in the server.
 */
 | 'TOKENIZER_DEEPSEEK_V3' | 4;
/**
 * Which tokenizer counts a session's tokens.
 */
export type Tokenizer__Output = typeof Tokenizer[keyof typeof Tokenizer];
