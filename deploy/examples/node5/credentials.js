// credentials.js: the ACL account the examples sign with, from
// RMQ_ACCESS_KEY and RMQ_SECRET_KEY; none (unsigned calls) when unset.
'use strict';

module.exports = () => (process.env.RMQ_ACCESS_KEY
  ? { accessKey: process.env.RMQ_ACCESS_KEY, accessSecret: process.env.RMQ_SECRET_KEY || '' }
  : undefined);
