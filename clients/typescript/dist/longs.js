// 64-bit integers, exact: the service's answers are decoded with every 64-bit field as
// its decimal text, then turned into a number only when the number is the same integer
// (up to 2^53 - 1). A larger one is refused, never rounded: the answer fails to decode
// (the call fails, INTERNAL) instead of carrying a neighbouring number.
import protobuf from 'protobufjs';
const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
/** The decimal text (or number) of a 64-bit field as a number, exactly, or a RangeError. */
export function exactNumber(value, field) {
    const text = typeof value === 'string' ? value : String(value);
    const number = Number(text);
    if (!Number.isSafeInteger(number) || String(number) !== text.replace(/^(-?)0+(?=\d)/, '$1')) {
        throw new RangeError(`${field} is ${text}, beyond what a JavaScript number holds exactly (2^53 - 1)`);
    }
    return number;
}
/** Turns the 64-bit fields of a decoded message (and of the messages in it) from text
 * into exact numbers, in place. */
export function exactLongs(message, type) {
    for (const field of type.fieldsArray) {
        const value = message[field.name];
        if (value === undefined || value === null)
            continue;
        const one = (item) => convert(item, field, type);
        if (field.map) {
            const entries = value;
            for (const key of Object.keys(entries))
                entries[key] = one(entries[key]);
        }
        else if (field.repeated) {
            message[field.name] = value.map(one);
        }
        else {
            message[field.name] = one(value);
        }
    }
}
function convert(value, field, type) {
    if (LONG_TYPES.has(field.type))
        return exactNumber(value, `${type.name}.${field.name}`);
    if (field.resolvedType instanceof protobuf.Type && typeof value === 'object' && value !== null) {
        exactLongs(value, field.resolvedType);
    }
    return value;
}
