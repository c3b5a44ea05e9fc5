object c77c99bcbc7283798b56ac1178e59880fa0835ee
type commit
tag v1
tagger T <t@example.org> 99999999999999999 +9999

msg
-----BEGIN SSH SIGNATURE-----
U1NIU0lH
-----END SSH SIGNATURE-----
