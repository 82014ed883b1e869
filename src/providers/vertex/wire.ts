// Veo on Vertex AI as the simulator's Vertex part plays it: the models it serves and the one
// service account it knows. Plain data, no imports. The gateway's own view is manifest.yaml.

export interface VertexVeoModel {
  resolutions: string[];
}

export const VERTEX_VEO_MODELS: Record<string, VertexVeoModel> = {
  'veo-3.1-generate-001': { resolutions: ['720p', '1080p'] },
  'veo-3.1-fast-generate-001': { resolutions: ['720p', '1080p'] },
};
export const VERTEX_VEO_RATIOS = ['16:9', '9:16'];
export const VERTEX_VEO_DURATIONS = [4, 6, 8];
export const VERTEX_VEO_IMAGE_TYPES = ['image/png', 'image/jpeg'];

/**
 * The simulator's service account: a simulator channel playing Vertex signs its OAuth assertion
 * with this key (so the real token exchange runs offline), and the simulator's token endpoint
 * checks the signature against the public key. A test key: it opens nothing but the simulator.
 */
export const VERTEX_SIMULATOR_ACCOUNT = {
  client_email: 'mediagate-simulator@mediagate-sim.iam.gserviceaccount.com',
  project_id: 'mediagate-sim',
  private_key: `-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQC/hAImUzz9h6Lo
tW0625vInTmZ8XaFyo1yKwq7lS0E1efbxtc4m/HA+YNy0dAXj+7aS3+a/E4hj8Ys
gcvjf0doAOR6LeE5fXj0jDMYcwtrH2LZK3OoL9PwvQxR8gOeVua9+FpKAu63h/kS
TbMuYQwmt22Y0HJ1xGJ6YtxoLahD5Z9ao6LgPa+eAn1v1KRbhcKn/yWCdJsmas9B
qY+74/5Rhy7oDz139mlry8iri9H/QoLRo4sVeXuKJ7yOugmStoR8Z3qXVWH8vo7s
hBC1QtcbJkNYGhrmGBoH1qtk+4WciGif9dpAeDjP3Fvr88FZgdKENRg5lOWAb8oC
A8DZ1Ec3AgMBAAECggEABg5uJPkf5iKab8KBBEn6mLMEJc6hgWSg6Xnb+oeip1L+
ZJBasQMZd5FMa16gNoaKNqQJkoSlEeGikji+kmCtiOfyUbzOsQs7PnyKhxzoQQh6
j0SVAT4V9Th9QcAmBiVYYayPamTCWNJ3eXE0l+Rgxn6pfBonbHr75EPpFXBQMGlu
CfGfXreLSvzlLNCVD5g5aYobzk6UDgstuS9EEqbVEbdGFbo2zFwJvzNMuOCG9nmn
5byWEwq/4IBdTat5YYMYK8eNhX+Klpjt7823LCggPw/P0pnCF8zX6uKaLTqszI5Y
iL7+tdtm0pduwF5w+uBAmNqYG5RRw5h2H35xLyab1QKBgQDewdidgrPI2KBvcCtb
5i1KlwSYDsnaQgY89buD8Xb93s7ZnxSa49clD3yIoAARWEoylhZNM3kD0LVRFNs9
C68Yg0p79Uvh+SMYKBaw7H3MOY5falPmDbGIBenqH3+DGZ1cBcyQMjgF0vOSx4cv
MwxqkaKwKfshlriQjifmZxAJCwKBgQDcGJ5kANiFrbSMJpnL3UEfWD+e4P+hYP9/
SoK8MNZmmFocN7X0GCA9+EAwpQ2n8o0MzX7QHg4wTClhZ53R5wJF4c05TLy4Yogw
s4wyKJYN4mOXycHrxlAAKUOlMN/fxek/PCg+peweuyn2j63u0IUokUZCfRy34UnR
g5mPxICOBQKBgBawIbLxRAR54+VVxGTIzeYh+YrPPsnnHaGJ2b53kooK7oCFzmB0
Qk55BFMaEMezeWMrnDviuTmlQUJv4GCYVw4lGSoE8uSiLmvgcWc1vx5U4mZfewoc
bO+QwqFg8ejVbAyaXpp1MvWM5dgWUHODPImCKdLNg9GI+2VlxTSXXK+/AoGBAMm2
altehxIku8aCjgtP0KJIf649qSqeuipQAHc3Dxfh4xvfVwvJnKsOvM2YR2a3nduw
7dsQ4JIVCwuxKeu4mtWu9yXflUorS4PO2dsSZUt+QyZWizppeuJa7xsTKupr+LOy
j3OzHy6e+/tzfMXVJ2Shl9HR1iMT/1JcGL2xKtx9AoGBAIt9gytoES2GDRcQ3FFA
6s+/qno4lnzP9AA0KeKqwYXNyNH7NI0R3kMk9ge7IBAYWmrSKjpgjfUHpe0JuYTR
zzUMJgDTlWvEeF66FXTi6xcAyst/4fO7tc5rCJQGDkmg4XqcsVU+M9iTU1AxKn8y
PXyNiNLt+XoooHbnvW4lDFPT
-----END PRIVATE KEY-----`,
  public_key: `-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAv4QCJlM8/Yei6LVtOtub
yJ05mfF2hcqNcisKu5UtBNXn28bXOJvxwPmDctHQF4/u2kt/mvxOIY/GLIHL439H
aADkei3hOX149IwzGHMLax9i2StzqC/T8L0MUfIDnlbmvfhaSgLut4f5Ek2zLmEM
JrdtmNBydcRiemLcaC2oQ+WfWqOi4D2vngJ9b9SkW4XCp/8lgnSbJmrPQamPu+P+
UYcu6A89d/Zpa8vIq4vR/0KC0aOLFXl7iie8jroJkraEfGd6l1Vh/L6O7IQQtULX
GyZDWBoa5hgaB9arZPuFnIhon/XaQHg4z9xb6/PBWYHShDUYOZTlgG/KAgPA2dRH
NwIDAQAB
-----END PUBLIC KEY-----`,
};
