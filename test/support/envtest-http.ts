import { type Agent, request } from "undici";

/** One request to the envtest apiserver (its self-signed certificate accepted by `dispatcher`) with a bearer token. */
export async function httpSend(
  dispatcher: Agent,
  method: "GET" | "POST" | "PUT",
  url: string,
  token: string,
  body: unknown,
): Promise<{ status: number; body: string }> {
  const response = await request(url, {
    method,
    dispatcher,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.statusCode, body: await response.body.text() };
}
