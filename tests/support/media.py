"""Real media fixtures generated in code: images with text tesseract reads, speech clips, broken files.

Images are drawn with Pillow and a TrueType font from the system (DejaVu or Liberation, installed
with tesseract's dependencies) so OCR works on them; speech is synthesised with espeak-ng and
converted with ffmpeg, so transcription tests hear a real voice.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

OCR_TEXT = "INVOICE 4721 TOTAL 86 DOLLARS"
SPEECH_TEXT = "The quick brown fox jumps over the lazy dog seven times."
SPEECH_WORDS = ("quick", "brown", "fox", "jumps", "lazy", "dog", "seven", "times")
"""The words of SPEECH_TEXT a test listens for: a tolerant match wants most, not all (tests/support/heard.py)."""
LECTURE_SENTENCES = (
    "Welcome to the lecture on the history of astronomy.",
    "Ancient observers tracked the moon and the wandering planets.",
    "Copernicus placed the sun at the centre of the system.",
    "Galileo pointed a small telescope at Jupiter in sixteen ten.",
    "He found four moons circling the giant planet.",
    "Kepler described the orbits as ellipses rather than circles.",
    "Newton explained those orbits with a single law of gravity.",
    "Herschel discovered Uranus while mapping faint stars.",
    "Neptune was predicted by mathematics before anyone saw it.",
    "Photography let astronomers measure the light of distant galaxies.",
    "Hubble showed that those galaxies are moving away from us.",
    "Today radio dishes and space telescopes extend our view.",
)
FONT_CANDIDATES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Bold.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
)


def _font(size: int):
    from PIL import ImageFont

    for candidate in FONT_CANDIDATES:
        if Path(candidate).is_file():
            return ImageFont.truetype(candidate, size)
    return ImageFont.load_default(size=size)


def make_text_image(path: Path, text: str = OCR_TEXT, *, font_size: int = 48, scale: float = 1.0) -> Path:
    """Black text on white, saved in the format of `path`'s extension (png, jpg, gif, webp, ...)."""
    from PIL import Image, ImageDraw

    font = _font(max(6, int(font_size * scale)))
    pad = max(4, int(30 * scale))
    left, top, right, bottom = font.getbbox(text)
    image = Image.new("RGB", (right - left + 2 * pad, bottom - top + 2 * pad), "white")
    ImageDraw.Draw(image).text((pad - left, pad - top), text, fill="black", font=font)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".gif":
        # Two frames: the tools must read the first one.
        blank = Image.new("RGB", image.size, "white")
        image.save(path, save_all=True, append_images=[blank], duration=500)
    else:
        image.save(path)
    return path


def make_blank_image(path: Path, size: tuple[int, int] = (200, 120)) -> Path:
    """A plain white image (no text at all)."""
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, "white").save(path)
    return path


def media_tools_available() -> bool:
    """True when espeak-ng and ffmpeg are installed (the speech fixtures need both)."""
    return shutil.which("espeak-ng") is not None and shutil.which("ffmpeg") is not None


def make_speech(path: Path, text: str = SPEECH_TEXT, *, speed: int = 140) -> Path:
    """A speech clip of `text` (espeak-ng), in the format of `path`'s extension (wav/mp3/m4a/flac/ogg)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    wav = path if path.suffix.lower() == ".wav" else path.with_suffix(".src.wav")
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", str(speed), "-w", str(wav), text], check=True,
                   capture_output=True, timeout=60)
    if wav != path:
        subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-i", str(wav), "-ac", "1", str(path)],
                       check=True, capture_output=True, timeout=60)
        wav.unlink()
    return path


def make_silence(path: Path, seconds: float = 2.0) -> Path:
    """A silent clip (no speech) in the format of `path`'s extension."""
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono",
                    "-t", str(seconds), str(path)], check=True, capture_output=True, timeout=60)
    return path


def make_corrupt(path: Path, size: int = 2048) -> Path:
    """A file with the right extension and deterministic garbage inside."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes((i * 7919 + 13) % 251 for i in range(size)))
    return path


def make_empty(path: Path) -> Path:
    """A zero-byte file with the given extension."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return path


SLIDE_TEXTS = ("GALILEO 1610", "FOUR MOONS")
SLIDE_SIZE = (640, 360)


def make_slide(path: Path, text: str, size: tuple[int, int] = SLIDE_SIZE) -> Path:
    """A video-sized still: large black text centred on white (what OCR of a keyframe must read)."""
    from PIL import Image, ImageDraw

    font = _font(56)
    image = Image.new("RGB", size, "white")
    left, top, right, bottom = font.getbbox(text)
    position = ((size[0] - (right - left)) // 2 - left, (size[1] - (bottom - top)) // 2 - top)
    ImageDraw.Draw(image).text(position, text, fill="black", font=font)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    return path


def make_video(path: Path, slides: tuple[str, ...] = SLIDE_TEXTS, speech: str | None = SPEECH_TEXT, *,
               slide_seconds: float = 2.5) -> Path:
    """A short video (H.264 and AAC, in the container `path`'s extension names): text slides in turn.

    `speech` is spoken by espeak-ng over them (None: the file has no audio track).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    work = path.parent / f".{path.stem}-parts"
    work.mkdir(exist_ok=True)
    command = ["ffmpeg", "-y", "-loglevel", "error"]
    for number, text in enumerate(slides):
        slide = make_slide(work / f"slide{number}.png", text)
        command += ["-loop", "1", "-framerate", "10", "-t", f"{slide_seconds:g}", "-i", str(slide)]
    video_inputs = "".join(f"[{n}:v]" for n in range(len(slides)))
    graph = f"{video_inputs}concat=n={len(slides)}:v=1:a=0,format=yuv420p[v]"
    maps = ["-map", "[v]"]
    if speech:
        command += ["-i", str(make_speech(work / "speech.wav", speech))]
        graph += f";[{len(slides)}:a]apad[a]"
        maps += ["-map", "[a]", "-c:a", "aac"]
    command += ["-filter_complex", graph, *maps, "-t", f"{len(slides) * slide_seconds:g}", "-c:v", "libx264",
                "-preset", "ultrafast", str(path)]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    shutil.rmtree(work, ignore_errors=True)
    return path
