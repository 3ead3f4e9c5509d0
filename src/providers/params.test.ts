import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors.ts';
import { jsonSchemaFormat } from './params.ts';
import { callFactory } from 'switchyard-gateway/kit/testing';

const callOf = callFactory({ provider: 'acme', model: 'acme-large' });
const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

describe('jsonSchemaFormat', () => {
  it('answers the json_schema block, name, description and strict kept', () => {
    const format = jsonSchemaFormat(callOf({ response_format: { type: 'json_schema', json_schema: { name: 'city', description: 'A city', strict: true, schema } } }));
    expect(format).toEqual({ name: 'city', description: 'A city', strict: true, schema });
  });

  it('nothing for no response_format or text', () => {
    expect(jsonSchemaFormat(callOf({}))).toBeUndefined();
    expect(jsonSchemaFormat(callOf({ response_format: { type: 'text' } }))).toBeUndefined();
  });

  it('a json_schema without a schema object is the client’s mistake: 400 invalid_request naming the field', () => {
    for (const bad of [undefined, 'not an object']) {
      // Cast on purpose: schemas the types exclude, as a client may send.
      const call = callOf({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: bad as never } } });
      const err = (() => {
        try {
          jsonSchemaFormat(call);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(GatewayError);
      expect(err).toMatchObject({ code: 'invalid_request', param: 'response_format.json_schema.schema' });
    }
  });

  it('json_object is unsupported: 400 naming response_format, or dropped and logged with dropUnsupportedParams', () => {
    expect(() => jsonSchemaFormat(callOf({ response_format: { type: 'json_object' } }))).toThrow(expect.objectContaining({ code: 'unsupported_parameter', param: 'response_format' }));
    const call = callOf({ response_format: { type: 'json_object' } }, { dropUnsupportedParams: true });
    expect(jsonSchemaFormat(call)).toBeUndefined();
    expect(call.log.info).toHaveBeenCalledWith(expect.objectContaining({ param: 'response_format' }), "dropped unsupported parameter 'response_format'");
  });
});
