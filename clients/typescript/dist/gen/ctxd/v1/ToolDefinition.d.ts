/**
 * A tool definition sent to the model with the request.
 */
export interface ToolDefinition {
    /**
     * The function name.
     */
    'name'?: (string);
    /**
     * What the tool does, as shown to the model.
     */
    'description'?: (string);
    /**
     * The JSON Schema of the parameters, as a JSON text. Empty means no parameters.
     */
    'parametersJsonSchema'?: (string);
}
/**
 * A tool definition sent to the model with the request.
 */
export interface ToolDefinition__Output {
    /**
     * The function name.
     */
    'name': (string);
    /**
     * What the tool does, as shown to the model.
     */
    'description': (string);
    /**
     * The JSON Schema of the parameters, as a JSON text. Empty means no parameters.
     */
    'parametersJsonSchema': (string);
}
