// With OpenTelemetry set up in the application (@opentelemetry/api with the W3C trace-context
// propagator and an AsyncLocalStorage context manager, as an OpenTelemetry SDK registers
// them), a call carries the caller's current trace: ctxd's span for it, exported to an
// OTLP/gRPC receiver on loopback, is in that trace, a child of the caller's span.
// Run by clients/typescript/run (CTXD_BIN set).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';

import * as grpc from '@grpc/grpc-js';
import { context, propagation, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { CtxdClient } from 'ctxd';

import { Server } from './server.mjs';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

/** An OTLP/gRPC receiver: each export request kept as its bytes (a span's trace and span
 * ids are in them verbatim), answered with the empty response. */
function receiver() {
  const traces = [];
  const raw = (path) => ({
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: (buffer) => buffer,
    requestDeserialize: (buffer) => buffer,
    responseSerialize: (buffer) => buffer,
    responseDeserialize: (buffer) => buffer,
  });
  const server = new grpc.Server();
  const prefix = '/opentelemetry.proto.collector';
  server.addService({ Export: raw(`${prefix}.trace.v1.TraceService/Export`) }, {
    Export: (call, done) => {
      traces.push(call.request);
      done(null, Buffer.alloc(0));
    },
  });
  server.addService({ Export: raw(`${prefix}.metrics.v1.MetricsService/Export`) }, {
    Export: (_call, done) => done(null, Buffer.alloc(0)),
  });
  return { server, traces };
}

const otlp = receiver();
const ctxd = new Server();

before(async () => {
  const port = await new Promise((resolve, reject) =>
    otlp.server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  ctxd.env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_METRIC_EXPORT_INTERVAL: '60000',
  };
  await ctxd.start();
});

after(async () => {
  await ctxd.stop();
  otlp.server.forceShutdown();
});

test("ctxd's span of a call joins the caller's trace", async () => {
  const traceId = randomBytes(16);
  const spanId = randomBytes(8);
  const caller = trace.wrapSpanContext({
    traceId: traceId.toString('hex'),
    spanId: spanId.toString('hex'),
    traceFlags: TraceFlags.SAMPLED,
  });
  const client = new CtxdClient(ctxd.addr);
  try {
    await context.with(trace.setSpan(context.active(), caller), () => client.createSession());
  } finally {
    client.close();
  }
  const seen = () => otlp.traces.some((raw) => raw.includes(traceId) && raw.includes(spanId));
  const deadline = Date.now() + 30_000;
  while (!seen() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(seen(), `no span of trace ${traceId.toString('hex')} reached the receiver`);
});
