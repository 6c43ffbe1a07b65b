import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, type Http2ClientSession } from "../../../lib/http2/client-session.js";
import { FrameType, Setting } from "../../../lib/http2/frames.js";
import { eventually } from "../../support/eventually.js";
import { get, nodeServer, openSession, post, runCleanups, StreamRecord, send } from "./h2-kit.js";
import { OK, type RawPeer, rawServer, requestsSeen } from "./raw-peer.js";

/**
 * A listener may reset its stream, destroy or close the session from inside any callback: every stream still
 * hears onClose once, the session once and last, and nothing stays open.
 */

afterEach(runCleanups);

type Callback = "onHead" | "onData" | "onTrailers" | "onDrain" | "onClose";
type Action = "reset" | "destroy" | "close";

const callbacks: Callback[] = ["onHead", "onData", "onTrailers", "onDrain", "onClose"];
const actions: Action[] = ["reset", "destroy", "close"];

describe("Http2ClientSession with a listener acting from inside its callbacks", () => {
  it.each(callbacks.flatMap((callback) => actions.map((action) => [callback, action] as const)))(
    "takes %s calling %s",
    async (callback, action) => {
      // A small stream window on the server's side, so a 64-octet body waits and onDrain comes.
      const { port } = await nodeServer(
        (stream) => {
          stream.on("data", () => undefined);
          stream.on("end", () => {
            if (stream.destroyed) return;
            stream.respond({ ":status": 200 }, { waitForTrailers: true });
            stream.on("wantTrailers", () => {
              if (!stream.destroyed) stream.sendTrailers({ "x-t": "1" });
            });
            stream.end("hello");
          });
        },
        { initialWindowSize: 16 },
      );
      const { session, record, socket } = openSession(port);
      let sessionCloses = 0;
      let streamsOpenAtSessionClose = -1;
      const onSessionClose = record.onClose.bind(record);
      record.onClose = (error) => {
        sessionCloses++;
        streamsOpenAtSessionClose = [target, bystander].filter((s) => s.closed === undefined).length;
        onSessionClose(error);
      };
      const bystander = send(session, get(port)).record;
      const target = new StreamRecord();
      let acted = 0;
      const act = (session: Http2ClientSession) => {
        if (acted++ > 0) return;
        if (action === "reset") stream.reset(ErrorCode.CANCEL);
        else if (action === "destroy") session.destroy();
        else session.close();
      };
      const hook = target[callback].bind(target) as (...args: never[]) => void;
      target[callback] = ((...args: never[]) => {
        hook(...args);
        act(session);
      }) as never;
      const stream = session.request(post(port), false, target);
      expect(stream.write(Buffer.alloc(64, 0x61))).toBe(false);
      stream.end();
      await Promise.all([target.done, bystander.done]);
      expect(acted).toBe(1);
      expect(target.events.filter((e) => e === "close")).toHaveLength(1);
      expect(bystander.events.filter((e) => e === "close")).toHaveLength(1);
      if (action !== "reset") {
        await eventually(() => sessionCloses > 0, 3000, "the session closed");
        expect(streamsOpenAtSessionClose).toBe(0);
      }
      // Nothing more can come once the connection closed, or (a reset) once a later request on it finished.
      if (action === "reset") await send(session, get(port)).record.done;
      else await eventually(() => socket.closed, 3000, "the connection closed");
      expect(sessionCloses).toBe(action === "reset" ? 0 : 1);
      expect(session.openStreams).toBe(0);
      if (action !== "destroy") expect(bystander.closed?.code).toBe(0);
    },
  );
});

describe("Http2ClientSession with a session listener acting from inside its callbacks", () => {
  it.each([
    ["onReady", "destroy"],
    ["onReady", "close"],
    ["onGoaway", "destroy"],
    ["onGoaway", "close"],
  ] as const)("takes %s calling %s", async (callback, action) => {
    const server = await rawServer(() => undefined, "none");
    const { session, record, socket } = openSession(server.port);
    let sessionCloses = 0;
    const onSessionClose = record.onClose.bind(record);
    record.onClose = (error) => {
      sessionCloses++;
      onSessionClose(error);
    };
    const hook = record[callback].bind(record) as (...args: never[]) => void;
    record[callback] = ((...args: never[]) => {
      hook(...args);
      if (action === "destroy") session.destroy();
      else session.close();
    }) as never;
    const streams = [
      send(session, get(server.port)),
      send(session, get(server.port)),
      send(session, get(server.port)),
    ];
    await eventually(() => server.peers[0]?.prefaceSeen === true, 2000, "the preface");
    const peer = server.peers[0] as RawPeer;
    peer.settings([Setting.MAX_CONCURRENT_STREAMS, 2]);
    if (callback === "onGoaway") {
      await requestsSeen(peer, 2);
      peer.send(FrameType.GOAWAY, 0, 0, [0, 0, 0, 1, 0, 0, 0, 0]);
    }
    if (action === "close") {
      await requestsSeen(peer, 2);
      peer.headers(1, OK, true);
      if (callback === "onReady") {
        peer.headers(3, OK, true);
        await requestsSeen(peer, 3);
        peer.headers(5, OK, true);
      }
    }
    await Promise.all(streams.map((s) => s.record.done));
    await eventually(() => sessionCloses > 0, 2000, "the session closed");
    await eventually(() => socket.closed, 2000, "the connection closed");
    expect(sessionCloses).toBe(1);
    expect(streams.map((s) => s.record.events.filter((e) => e === "close").length)).toEqual([1, 1, 1]);
    expect(session.openStreams).toBe(0);
    const codes = streams.map((s) => s.record.closed?.code);
    if (callback === "onReady" && action === "close") expect(codes).toEqual([0, 0, 0]);
    if (callback === "onGoaway")
      expect(streams.slice(1).map((s) => s.record.closed?.unprocessed)).toEqual([true, true]);
    if (callback === "onGoaway" && action === "close") expect(codes[0]).toBe(0);
  });
});
