// The provider formats whose AppendNative reading the server has. A format left out is
// skipped by the ToolResult test and runs as a TODO in the agent loop: add it here once
// the server reads it (ANTHROPIC_MESSAGES and GEMINI bodies are read on the branch that
// adds their readers).
export const SERVER_READS = new Set(['openai_chat', 'openai_responses']);
