import { describe, expect, it } from "vitest";
import {
  errorToAPIStatus,
  newApplyConflict,
  newGenericServerResponse,
  newNotAcceptableError,
  newNotFound,
  newRequestEntityTooLargeError,
  newTooManyRequests,
  newUnsupportedMediaTypeError,
} from "./errors.ts";

const none = { group: "", resource: "" };

describe("the Status constructors", () => {
  it("NewGenericServerResponse: go-restful's 404 and 405, the PATCH handler's 422, with empty details", () => {
    expect(newGenericServerResponse(404, "", none, "", "", 0, false).status).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "the server could not find the requested resource",
      reason: "NotFound",
      details: {},
      code: 404,
    });
    const notAllowed = newGenericServerResponse(405, "", none, "", "", 0, false).status;
    expect([notAllowed.reason, notAllowed.message]).toEqual([
      "MethodNotAllowed",
      "the server does not allow this method on the requested resource",
    ]);
    const invalid = newGenericServerResponse(
      422,
      "",
      none,
      "",
      "add operation does not apply",
      0,
      false,
    ).status;
    expect([invalid.reason, invalid.message]).toEqual([
      "Invalid",
      "the server rejected our request due to an error in our request",
    ]);
  });

  it("NewGenericServerResponse names the verb and resource, and keeps the server's words where upstream does", () => {
    const pods = { group: "", resource: "pods" };
    const created = newGenericServerResponse(409, "POST", pods, "web", "", 0, false).status;
    expect([created.reason, created.message, created.details]).toEqual([
      "AlreadyExists",
      "the server reported a conflict (post pods web)",
      { kind: "pods", name: "web" },
    ]);
    expect(newGenericServerResponse(409, "PUT", pods, "", "", 0, false).status.reason).toBe("Conflict");
    expect(newGenericServerResponse(403, "GET", pods, "", "no", 0, false).status.message).toBe(
      "no (get pods)",
    );
    expect(newGenericServerResponse(502, "", none, "", "bad gateway", 3, true).status).toMatchObject({
      reason: "InternalError",
      message: 'an error on the server ("bad gateway") has prevented the request from succeeding',
      details: {
        retryAfterSeconds: 3,
        causes: [{ reason: "UnexpectedServerResponse", message: "bad gateway" }],
      },
    });
  });

  it("the negotiation errors list what the server accepts", () => {
    expect(newNotAcceptableError(["application/json", "application/yaml"]).status).toMatchObject({
      code: 406,
      reason: "NotAcceptable",
      message: "only the following media types are accepted: application/json, application/yaml",
    });
    const unsupported = newUnsupportedMediaTypeError(["application/json"]).status;
    expect(unsupported).toMatchObject({
      code: 415,
      reason: "UnsupportedMediaType",
      message:
        "the body of the request was in an unknown format - accepted media types include: application/json",
    });
    expect(unsupported.details).toBeUndefined();
  });

  it("too large, too many, an apply conflict, and an error that is no Status", () => {
    expect(newRequestEntityTooLargeError("limit is 3").status).toMatchObject({
      code: 413,
      reason: "RequestEntityTooLarge",
      message: "Request entity too large: limit is 3",
    });
    expect(newTooManyRequests("storage is (re)initializing", 1).status).toMatchObject({
      code: 429,
      reason: "TooManyRequests",
      details: { retryAfterSeconds: 1 },
    });
    const causes = [
      { reason: "FieldManagerConflict", message: 'conflict with "a"', field: ".spec.replicas" },
    ];
    expect(newApplyConflict(causes, "Apply failed with 1 conflict").status).toMatchObject({
      code: 409,
      reason: "Conflict",
      details: { causes },
    });
    expect(errorToAPIStatus(new Error("boom")).status).toMatchObject({
      code: 500,
      reason: "",
      message: "boom",
    });
    const notFound = newNotFound({ group: "", resource: "pods" }, "web");
    expect(errorToAPIStatus(notFound)).toBe(notFound);
  });
});
