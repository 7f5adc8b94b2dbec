import protobuf from 'protobufjs';
/** The decimal text (or number) of a 64-bit field as a number, exactly, or a RangeError. */
export declare function exactNumber(value: unknown, field: string): number;
/** Turns the 64-bit fields of a decoded message (and of the messages in it) from text
 * into exact numbers, in place. */
export declare function exactLongs(message: Record<string, unknown>, type: protobuf.Type): void;
