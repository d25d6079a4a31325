"""Media: images (OCR, vision), audio (transcription) and video (downloads cached per run, frames, speech)."""
