/* gpg_vectors.h - fixed keys and signatures for the gpgme unit tests (generated). */
#ifndef PG_GPG_VECTORS_H
#define PG_GPG_VECTORS_H

/* made by tests/unit/gen-gpg-vectors.sh; do not edit */
#define FPR_GINA "6D53AF3DFA11BF51C9FA7A1559088E075D61156C"
#define FPR_GINA_SUB "AF752FB12360BE91F9C99A56BC3E0C8871D22D81"
#define FPR_OLGA "E27B57E120AE2FA4F36401DF2153D2BE16ABABB4"
#define FPR_REX "B5A35506510032AF8BF5187E146A87A472A1584B"
#define FPR_SID "A3C2CDC6536F0916B0EB9165A7A29115779183F5"
#define FPR_UMA "B9BC6D4F730A8B48EF278F4B50C96750817381B9"

static const char TAG_V1[] PG_UNUSED =
	"object 1111111111111111111111111111111111111111\n"
	"type commit\n"
	"tag v1\n"
	"tagger Gina Good <gina@example.org> 1700000000 +0000\n"
	"\n"
	"v1 for the merge window\n"
	;

static const char SIG_GINA[] PG_UNUSED =
	"-----BEGIN PGP SIGNATURE-----\n"
	"\n"
	"iHUEABYIAB0WIQSvdS+xI2C+kfnJmla8PgyIcdItgQUCaxEijQAKCRC8PgyIcdIt\n"
	"gYPdAQC9T80qdlArgU09UMwHJlC4aZRYbeu+6LTUvSNfIW+suAD9FYgGDbmamVl8\n"
	"EYwZhPoX5li6sIyB+0MvOHqu5uEZWgs=\n"
	"=gSAz\n"
	"-----END PGP SIGNATURE-----\n"
	;

static const char SIG_OLGA[] PG_UNUSED =
	"-----BEGIN PGP SIGNATURE-----\n"
	"\n"
	"iIcEABYIAC8WIQTie1fhIK4vpPNkAd8hU9K+FqurtAUCXtRFABEcb2xnYUBleGFt\n"
	"cGxlLm9yZwAKCRAhU9K+FqurtKuhAP4xFrGTnqFd/d8R1KxH0VT66EGUy5onu5En\n"
	"xZ0+G+bhqgEAwgdOA5pP69wDqRauhtbuXHs5JthBawTH+sJae645UQE=\n"
	"=H0UJ\n"
	"-----END PGP SIGNATURE-----\n"
	;

static const char SIG_REX[] PG_UNUSED =
	"-----BEGIN PGP SIGNATURE-----\n"
	"\n"
	"iIYEABYIAC4WIQS1o1UGUQAyr4v1GH4UaoekcqFYSwUCaxEijRAccmV4QGV4YW1w\n"
	"bGUub3JnAAoJEBRqh6RyoVhL4BwA/jlwAeKajjy/GchUCUY5z9wqStZSl0endd2a\n"
	"gM2au0C9AQD/KW0G0mWj6mzreqbhehT3mShUxNd8yh20ZDhft+QvCw==\n"
	"=Xx5q\n"
	"-----END PGP SIGNATURE-----\n"
	;

static const char SIG_SID[] PG_UNUSED =
	"-----BEGIN PGP SIGNATURE-----\n"
	"\n"
	"iIwEABYIADQWIQSjws3GU28JFrDrkWWnopEVd5GD9QUCXtRFAAWDAAFRgBAcc2lk\n"
	"QGV4YW1wbGUub3JnAAoJEKeikRV3kYP1Wh0A/141SMprRuNsQVfZ0dpDd/Uo+PDH\n"
	"plO0e7015FcdTZgJAP9bvJdITNzUlJo2czYFkEe/YPjbCle70UuHT2sgQ66jBg==\n"
	"=TOhP\n"
	"-----END PGP SIGNATURE-----\n"
	;

static const char SIG_UMA[] PG_UNUSED =
	"-----BEGIN PGP SIGNATURE-----\n"
	"\n"
	"iIYEABYIAC4WIQS5vG1PcwqLSO8nj0tQyWdQgXOBuQUCaxEijRAcdW1hQGV4YW1w\n"
	"bGUub3JnAAoJEFDJZ1CBc4G5Gr8BAJ49vj+DvCpA44t6XV2tOnLgy8RfAkfTqJxC\n"
	"r+hdQVt1AQDVJOCwj1kATWz0BSFsGcSSiewkt9sslkwUZlKr6C+hDA==\n"
	"=OqXA\n"
	"-----END PGP SIGNATURE-----\n"
	;

static const char TAG_V1_MALLORY[] PG_UNUSED =
	"object 1111111111111111111111111111111111111111\n"
	"type commit\n"
	"tag v1\n"
	"tagger Gina Good <mallory@example.org> 1700000000 +0000\n"
	"\n"
	"v1 for the merge window\n"
	;

static const char SIG_GINA_MALLORY[] PG_UNUSED =
	"-----BEGIN PGP SIGNATURE-----\n"
	"\n"
	"iHUEABYIAB0WIQSvdS+xI2C+kfnJmla8PgyIcdItgQUCaxEijQAKCRC8PgyIcdIt\n"
	"ga5CAQC4x8rYs6BombpbiQElvlkkBfd+FdhPKWVOY+hvU1GxEwD/ZOeVq3zwgMR+\n"
	"q70JL6pZZzlH/VNylpFLIneX8yFpZQQ=\n"
	"=E/HW\n"
	"-----END PGP SIGNATURE-----\n"
	;

static const char TAG_SUB[] PG_UNUSED =
	"object 1111111111111111111111111111111111111111\n"
	"type commit\n"
	"tag sub-1\n"
	"tagger Gina Good <gina@kernel.example> 1700000000 +0000\n"
	"\n"
	"sub-1 for the merge window\n"
	;

static const char SIG_GINA_SUB[] PG_UNUSED =
	"-----BEGIN PGP SIGNATURE-----\n"
	"\n"
	"iHUEABYIAB0WIQSvdS+xI2C+kfnJmla8PgyIcdItgQUCaxEijgAKCRC8PgyIcdIt\n"
	"gTGKAP9aEHjngpiChPKpNyPJDjAoH6UnWcx91D8ojv8FVKCIQAD+PBHDnRL8dMq1\n"
	"aUsZc/pkhPXX1UaJB3cQMYRMgGgQvwQ=\n"
	"=qMhq\n"
	"-----END PGP SIGNATURE-----\n"
	;

static const char TAG_SUB_UMA[] PG_UNUSED =
	"object 1111111111111111111111111111111111111111\n"
	"type commit\n"
	"tag sub-1\n"
	"tagger Gina Good <gina@kernel.example> 1700000000 +0000\n"
	"\n"
	"sub-1 for the merge window\n"
	;

static const char SIG_UMA_SUB[] PG_UNUSED =
	"-----BEGIN PGP SIGNATURE-----\n"
	"\n"
	"iIYEABYIAC4WIQS5vG1PcwqLSO8nj0tQyWdQgXOBuQUCaxEijhAcdW1hQGV4YW1w\n"
	"bGUub3JnAAoJEFDJZ1CBc4G5hhcBAMk4BgGYWC6hggzkgi3NyQYt2KdN/IjpludW\n"
	"SP1CwS/zAP0V1ytF2fd7aPTYlB7+M4D1mItSXDBU3ckiYhShpqK/Bw==\n"
	"=6+GS\n"
	"-----END PGP SIGNATURE-----\n"
	;

static const char KEYRING[] PG_UNUSED =
	"-----BEGIN PGP PUBLIC KEY BLOCK-----\n"
	"\n"
	"mDMEaxEijRYJKwYBBAHaRw8BAQdAtc2hp5p9akXuDGVh0V+vc/wlYV9GSr5yAlEC\n"
	"ivjKMo+0H0dpbmEgR29vZCA8Z2luYUBrZXJuZWwuZXhhbXBsZT6IkAQTFggAOBYh\n"
	"BG1Trz36Eb9Ryfp6FVkIjgddYRVsBQJrESKNAhsBBQsJCAcCBhUKCQgLAgQWAgMB\n"
	"Ah4BAheAAAoJEFkIjgddYRVsTuUA/Re8e/rY6s0PLj6v2QuSw395lFHTg9JC5zqC\n"
	"joydtmfsAP4wr3lGQk2hBe1C6DPo/fLYxx7aorRG8NDHxmaT+nrbB7QcR2luYSBH\n"
	"b29kIDxnaW5hQGV4YW1wbGUub3JnPoiQBBMWCAA4FiEEbVOvPfoRv1HJ+noVWQiO\n"
	"B11hFWwFAmsRIo0CGwEFCwkIBwIGFQoJCAsCBBYCAwECHgECF4AACgkQWQiOB11h\n"
	"FWzG8AEAq6LEMP27CT4d0qOqjshVEe+u8VJX0KbPDx8lKhjsd6EBAOFwy4omRaxw\n"
	"C+orB2od5b1cltkPVDQpeBKnqFiXPTAPuDMEaxEijRYJKwYBBAHaRw8BAQdAL+8H\n"
	"bv4QkRkghdIu50/09hF4VtIrZnJGSBDKCBCJQRaI7wQYFggAIBYhBG1Trz36Eb9R\n"
	"yfp6FVkIjgddYRVsBQJrESKNAhsCAIEJEFkIjgddYRVsdiAEGRYIAB0WIQSvdS+x\n"
	"I2C+kfnJmla8PgyIcdItgQUCaxEijQAKCRC8PgyIcdItgWhtAP49fG0GpZ+iwUkJ\n"
	"VpchqkpoOL9UtpTnQ7NyuEzyFFBK3AD/Vrwkb/XRirisVdyGhI2UvVwBCPsb9o0D\n"
	"+uOGs3yVsgtu7gD/aabn4w1feVhrXmtqG/L5aoFlL74Kpb62yNLBshu/BI4A/iUt\n"
	"ihRn6ViU+lMZvofFpCN1T6ljkHFnzkiEJsZXkK0JmDMEXgvhABYJKwYBBAHaRw8B\n"
	"AQdAeY4DmuXzXbLBR6ybfzcxvgSsA/F4mQg/H+PGs+H+pAK0G09sZ2EgT2xkIDxv\n"
	"bGdhQGV4YW1wbGUub3JnPoiWBBMWCAA+FiEE4ntX4SCuL6TzZAHfIVPSvharq7QF\n"
	"Al4L4QACGwMFCQHhM4AFCwkIBwIGFQoJCAsCBBYCAwECHgECF4AACgkQIVPSvhar\n"
	"q7QfcQD/RDj/ua07ULbH/OIFhOLDb2vNw5ZGKDKQAOxj2qAv26QA/RghIsAqj+eN\n"
	"HdFQ6P66tXC5c1yH9Bf05yLSWDfYWMcPmDMEaxEijRYJKwYBBAHaRw8BAQdAEusC\n"
	"3JBrzHOJ6A/NSfJoQmNqUmPNvO8VCUYFkrr9rsKIeAQgFggAIBYhBLWjVQZRADKv\n"
	"i/UYfhRqh6RyoVhLBQJrESKNAh0AAAoJEBRqh6RyoVhLT0AA/A0P7TPBsUMnAVCH\n"
	"b07AejODr+Rr9k3KhQwg41fCCoXEAP9L2CoDrWO16+yp58CYN+c2kVKRhf64wk/g\n"
	"6PKUNHi+DrQdUmV4IFJldm9rZWQgPHJleEBleGFtcGxlLm9yZz6IkAQTFggAOBYh\n"
	"BLWjVQZRADKvi/UYfhRqh6RyoVhLBQJrESKNAhsDBQsJCAcCBhUKCQgLAgQWAgMB\n"
	"Ah4BAheAAAoJEBRqh6RyoVhLC/kA/iLB0lPc4AOvfsKIKRTLskHoEi82t1UWbJSi\n"
	"sy+7HM2DAQDKebM3qr3U+4PyQsDSDrr+koD20ATwuKBtdCC9oOW/BJgzBF4L4QAW\n"
	"CSsGAQQB2kcPAQEHQMWFw8tHPcJH+VMbQDYlTNmiFkpZCATguGZ1UGxsLAaItBxT\n"
	"aWQgU2lnZXhwIDxzaWRAZXhhbXBsZS5vcmc+iJAEExYIADgWIQSjws3GU28JFrDr\n"
	"kWWnopEVd5GD9QUCXgvhAAIbAwULCQgHAgYVCgkICwIEFgIDAQIeAQIXgAAKCRCn\n"
	"opEVd5GD9awLAQCDTkVVM2wJck3bfMOO8afCshp+vVRbZXd82AlvvItiBwEAhFYB\n"
	"9dA6XswDNjcQ0zOu6gPyfM6o6wmARqcvkRXtLA4=\n"
	"=ZLvw\n"
	"-----END PGP PUBLIC KEY BLOCK-----\n"
	;

#endif
