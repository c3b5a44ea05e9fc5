object c77c99bcbc7283798b56ac1178e59880fa0835ee
type commit
tag lightweight-ish

no tagger, no signature
- one
- two
  - nested
* three
